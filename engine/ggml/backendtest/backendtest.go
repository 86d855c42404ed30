// Package backendtest checks engine/ggml's ops on a real ggml backend
// against float64 Go references of each op's math, in the manner of ggml's
// test-backend-ops: a table of cases (op, shapes, dtype, tolerance on the
// normalised mean squared error), random inputs, and guard checks that every
// input is still intact after the graph ran. The CPU suite runs in make
// test; under the metal build tag the same table runs on Metal and is
// compared with the CPU (make mac-test).
package backendtest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"h3studio/engine/ggml"
)

// Tolerances on NMSE (sum((got-want)²) / sum(want²)) per kind of arithmetic.
const (
	TolF32   = 1e-9 // f32 throughout
	TolF16   = 1e-6 // an f16 operand (half-precision rounding of activations)
	TolBF16  = 1e-4 // a bf16 operand: ggml rounds the other operand to bf16 too
	TolQuant = 1e-4 // q8_0/q4_K weights (activations quantized to q8)
	TolAttn  = 1e-4 // flash attention with bf16 or f16 K/V
)

// Case is one op check. Build declares inputs through the Builder, builds
// the op and returns its result and the float64 reference of it in ggml
// order. Fallback lists ops Audit is expected to flag (CPU-only variants
// kept for reference); it is empty for every Metal-safe case.
type Case struct {
	Name     string
	Tol      float64
	Build    func(b *Builder) (*ggml.Tensor, []float64)
	Fallback []string
}

// Builder hands a case its graph and deterministic random inputs.
type Builder struct {
	G      *ggml.Graph
	R      *rand.Rand
	inputs []input
}

type input struct {
	t   *ggml.Tensor
	raw []byte
}

// Rand declares an input of normal(0,1) values (scaled by amp) and returns
// it with the values ggml holds (after f16/bf16 rounding or quantization).
func (b *Builder) Rand(name string, dt ggml.DType, amp float64, shape ...int) (*ggml.Tensor, []float64) {
	t := b.G.Input(name, dt, shape...)
	v := make([]float32, t.Elements())
	for i := range v {
		v[i] = float32(amp * b.R.NormFloat64())
	}
	raw := ggml.Quantize(dt, v, t.Ne(0))
	t.SetRaw(raw)
	b.inputs = append(b.inputs, input{t, raw})
	b.G.Output(t) // kept intact and readable: the guard check reads it back
	held := ggml.Dequantize(dt, raw, len(v))
	out := make([]float64, len(held))
	for i, x := range held {
		out[i] = float64(x)
	}
	return t, out
}

// Ints declares an i32 input.
func (b *Builder) Ints(name string, v []int32) *ggml.Tensor {
	t := b.G.Input(name, ggml.I32, len(v))
	t.SetI32(v)
	return t
}

// Result is the outcome of one case on one backend.
type Result struct {
	Got      []float32
	Want     []float64
	NMSE     float64
	Findings []ggml.Finding // Metal audit of the case's graph
	Ops      []ggml.Node
}

// Run builds c on backend be with the given seed, computes it, checks the
// inputs are unchanged and compares with the reference.
func Run(be *ggml.Backend, c Case, seed uint64) (Result, error) {
	g := be.NewGraph(0)
	defer g.Free()
	b := &Builder{G: g, R: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))}
	out, want := c.Build(b)
	g.Output(out)
	res := Result{Want: want, Ops: g.Ops()}
	res.Findings = ggml.AuditNodes(res.Ops)
	if err := g.Compute(); err != nil {
		return res, err
	}
	for _, in := range b.inputs {
		if !slices.Equal(in.t.Raw(), in.raw) {
			return res, fmt.Errorf("input %s was overwritten by the graph", in.t)
		}
	}
	res.Got = out.F32()
	if len(res.Got) != len(want) {
		return res, fmt.Errorf("result %s has %d values, reference %d", out, len(res.Got), len(want))
	}
	res.NMSE = NMSE(res.Got, want)
	return res, nil
}

// NMSE is the normalised mean squared error of got against want; NaN or Inf
// anywhere in got gives +Inf.
func NMSE(got []float32, want []float64) float64 {
	var num, den float64
	for i, w := range want {
		x := float64(got[i])
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return math.Inf(1)
		}
		num += (x - w) * (x - w)
		den += w * w
	}
	if den == 0 {
		return num
	}
	return num / den
}
