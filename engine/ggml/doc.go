// Package ggml is H3 Studio's thin cgo binding to ggml, the compute library
// every model package builds its graphs with. ggml's C/C++ sources come
// from the pinned github.com/ollama/ollama module (imported only so that they
// are compiled and linked); the C API subset we call is declared in decls.h,
// checked against the real headers by tools/abicheck. ggml's CPU backend
// runs the graphs here; on macOS/arm64 its Metal backend runs them, and on
// Linux its CUDA backend once LoadBackend registered the library `make
// cuda` builds, with ggml's scheduler falling back to the CPU per op.
//
// # Shapes
//
// Shapes are in ggml order: shape[0] is ne0, the fastest-varying
// (contiguous) axis, then ne1, ne2, ne3. A PyTorch tensor [B, T, C] is
// declared here as shape (C, T, B). At most 4 axes; missing trailing axes
// are 1.
//
// # Building and running graphs
//
//	b, err := ggml.NewBackend(ggml.BackendOptions{})   // Metal or CUDA when present, else CPU
//	defer b.Close()
//	g := b.NewGraph(0)                                 // a no_alloc graph context
//	defer g.Free()
//	x := g.Input("x", ggml.F32, 64, 10)               // 10 rows of 64
//	w := g.Input("w", ggml.F32, 64, 32)
//	y := g.MulMat(w, x).SetName("y")                   // [32, 10]
//	g.Output(y)
//	x.SetF32(xs); w.SetF32(ws)                         // staged until Compute
//	err = g.Compute()
//	out := y.F32()
//
// Inputs are staged in Go memory and uploaded when Compute allocates the
// graph. Results of a graph are readable until the next Compute (or Measure)
// on the same Backend (ggml's scheduler reuses its buffers); reading later
// panics. A Backend runs one graph at a time; a Graph is for one goroutine.
// Weights that many graphs share live in a WeightSet: persistent backend
// buffers (device memory, or zero-copy over page-aligned host memory where the
// device allows it).
//
// # Ops
//
// Methods of Graph, each validated in Go first:
//
//   - linear algebra: MulMat, Linear (weights f32, f16, bf16, q8_0, q4_K)
//   - elementwise (b broadcast over a): Add, Sub, Mul, Div, Scale, Clamp
//   - activations: SiLU, GELU, GELUTanh, SwiGLU, Snake, Tanh, Sigmoid, Exp,
//     Log, Sin, Cos, Sqr, Sqrt
//   - norms: RMSNorm, LayerNorm, GroupNorm (no affine part; compose Mul/Add)
//   - rotary: RoPE (NeoX, mRoPE, Qwen3-VL imRoPE, vision), RoPETable (our
//     own cos/sin tables)
//   - attention: Attention (chunked, causal or not, GQA), FlashAttn (one
//     call), SoftMax (small cases only)
//   - convolution: Conv1D, Conv2D, Conv3D (Metal-safe), ConvTranspose1D
//   - layout: Reshape, View, Permute, Transpose, Cont, Cast, Cpy, Concat,
//     GetRows, Pad, PadLeft, Zeros, Interpolate, BilinearUp2, Mean, SumRows
//
// # Errors and panics
//
// Building a graph with wrong shapes or dtypes is a programmer error: every
// op checks its arguments in Go before calling C and panics with a message
// naming the tensors and shapes, so no GGML_ASSERT can abort the process.
// Device failures (allocation, compute) are returned as errors.
//
// # Variants chosen here
//
// Choices that depend on the backend (K/V dtype for attention, query chunk
// size) are made by this package from the backend's capabilities; see
// Attention and Backend.KVType. Audit lists the graph nodes ggml-metal would
// not run, so Linux CI catches silent CPU fallbacks on a Mac; ops that ggml
// runs on Metal only in some forms have Metal-safe versions here (Conv3D,
// PadLeft, BilinearUp2, Snake).
//
// Graphs and weight sets should be freed with Free; a forgotten one is
// released by the garbage collector once unreachable.
//
// Without cgo the package still compiles (so dependents vet for darwin with
// CGO_ENABLED=0), but every entry point that reaches C panics with ErrNoCgo,
// and NewBackend returns it. That twin, capi_nocgo.go, is generated from the
// cgo wrappers by tools/cgotwin.
package ggml

//go:generate go run ../../tools/cgotwin
