package ggml

import "fmt"

// Elementwise, matmul, norm and activation ops. Each checks its arguments
// in Go (shapes, dtypes, layout) so that ggml's own asserts can never fire.

func (g *Graph) need(op string, cond bool, format string, args ...any) {
	if !cond {
		panicf("%s: %s", op, fmt.Sprintf(format, args...))
	}
}

func rowsDense(t *Tensor) bool { return t.nb[0] == int64(t.dt.BlockBytes()) }

// MulMat computes a·bᵀ per ggml: a [K, M, A2, A3] (weights: any of f32, f16,
// bf16, q8_0, q4_K) times b [K, N, B2, B3] (f32) gives f32 [M, N, B2, B3];
// B2, B3 must be multiples of A2, A3 (broadcast). With bf16 weights ggml
// rounds b to bf16 as well (~2e-3 relative error). On Metal, products with
// more than 8 rows of b stage both operands in half precision (bfloat for
// bf16 weights; ggml-metal's kernel_mul_mm), so f32 weights are not exact
// there and activations beyond ±65504 overflow unless the weights are bf16.
func (g *Graph) MulMat(a, b *Tensor) *Tensor {
	const op = "MulMat"
	g.own(op, a, b)
	g.need(op, a.dt != I32, "weights %s: i32 is not a matmul type", a)
	g.need(op, b.dt == F32, "activations %s must be f32", b)
	g.need(op, a.ne[0] == b.ne[0], "inner dims differ: %s vs %s", a, b)
	g.need(op, b.ne[2]%a.ne[2] == 0 && b.ne[3]%a.ne[3] == 0, "cannot broadcast %s over %s (axes 2,3)", a, b)
	g.need(op, rowsDense(a) && a.nb[1] >= a.nb[0]*a.ne[0]/int64(a.dt.BlockSize()), "weights %s must have dense, untransposed rows (use Cont)", a)
	g.need(op, !a.dt.Quantized() || a.Contiguous(), "quantized weights %s must be contiguous", a)
	g.need(op, rowsDense(b), "activations %s must have dense rows (use Cont)", b)
	r := g.wrap(cBinary(g.ctx, bMulMat, a.h, b.h))
	cMulMatPrecF32(r.h)
	return r
}

func (g *Graph) binary(op string, code binaryOp, a, b *Tensor) *Tensor {
	g.own(op, a, b)
	g.need(op, a.dt == F32 && b.dt == F32, "%s and %s must both be f32", a, b)
	for i := range 4 {
		g.need(op, a.ne[i]%b.ne[i] == 0, "%s does not broadcast over %s (axis %d: %d %% %d != 0)", b, a, i, a.ne[i], b.ne[i])
	}
	g.need(op, rowsDense(a) && rowsDense(b), "%s and %s need unit element stride", a, b)
	return g.wrap(cBinary(g.ctx, code, a.h, b.h))
}

// Add returns a + b, b broadcast over a (each axis of a a multiple of b's).
func (g *Graph) Add(a, b *Tensor) *Tensor { return g.binary("Add", bAdd, a, b) }

// Sub returns a - b with b broadcast over a.
func (g *Graph) Sub(a, b *Tensor) *Tensor { return g.binary("Sub", bSub, a, b) }

// Mul returns a * b elementwise with b broadcast over a.
func (g *Graph) Mul(a, b *Tensor) *Tensor { return g.binary("Mul", bMul, a, b) }

// Div returns a / b elementwise with b broadcast over a.
func (g *Graph) Div(a, b *Tensor) *Tensor { return g.binary("Div", bDiv, a, b) }

// Scale returns a * s.
func (g *Graph) Scale(a *Tensor, s float32) *Tensor {
	g.own("Scale", a)
	g.need("Scale", a.dt == F32 && a.Contiguous(), "%s must be contiguous f32", a)
	return g.wrap(cScale(g.ctx, a.h, s))
}

// RMSNorm normalises each row (axis 0): x / sqrt(mean(x²) + eps). Multiply
// by a weight with Mul.
func (g *Graph) RMSNorm(a *Tensor, eps float32) *Tensor {
	g.own("RMSNorm", a)
	g.need("RMSNorm", a.dt == F32 && rowsDense(a), "%s must be f32 with dense rows", a)
	return g.wrap(cNorm(g.ctx, a.h, true, eps))
}

// LayerNorm normalises each row (axis 0) to zero mean and unit variance
// (no affine part; apply weight and bias with Mul and Add).
func (g *Graph) LayerNorm(a *Tensor, eps float32) *Tensor {
	g.own("LayerNorm", a)
	g.need("LayerNorm", a.dt == F32 && rowsDense(a), "%s must be f32 with dense rows", a)
	return g.wrap(cNorm(g.ctx, a.h, false, eps))
}

// GroupNorm normalises a [W, H, C, N] tensor over groups of C/groups
// channels (statistics over W, H and the group's channels, per N), without
// an affine part. Laying a video out as [W, H, C, T] gives per-frame stats.
func (g *Graph) GroupNorm(a *Tensor, groups int, eps float32) *Tensor {
	g.own("GroupNorm", a)
	g.need("GroupNorm", a.dt == F32 && a.Contiguous(), "%s must be contiguous f32", a)
	g.need("GroupNorm", groups > 0 && a.ne[2]%int64(groups) == 0, "%d groups do not divide the %d channels of %s", groups, a.ne[2], a)
	return g.wrap(cGroupNorm(g.ctx, a.h, groups, eps))
}

func (g *Graph) unary(op string, code unaryOp, a *Tensor) *Tensor {
	g.own(op, a)
	g.need(op, a.dt == F32 && a.Contiguous(), "%s must be contiguous f32 (use Cont)", a)
	return g.wrap(cUnary(g.ctx, code, a.h))
}

// SiLU returns x·sigmoid(x).
func (g *Graph) SiLU(a *Tensor) *Tensor { return g.unary("SiLU", uSilu, a) }

// GELU returns the exact (erf) GELU.
func (g *Graph) GELU(a *Tensor) *Tensor { return g.unary("GELU", uGELUErf, a) }

// GELUTanh returns the tanh approximation of GELU (PyTorch approximate="tanh").
func (g *Graph) GELUTanh(a *Tensor) *Tensor { return g.unary("GELUTanh", uGELUTanh, a) }

// Sin returns sin(x).
func (g *Graph) Sin(a *Tensor) *Tensor { return g.unary("Sin", uSin, a) }

// Cos returns cos(x).
func (g *Graph) Cos(a *Tensor) *Tensor { return g.unary("Cos", uCos, a) }

// Sqr returns x².
func (g *Graph) Sqr(a *Tensor) *Tensor { return g.unary("Sqr", uSqr, a) }

// Sqrt returns √x.
func (g *Graph) Sqrt(a *Tensor) *Tensor { return g.unary("Sqrt", uSqrt, a) }

// Tanh returns tanh(x).
func (g *Graph) Tanh(a *Tensor) *Tensor { return g.unary("Tanh", uTanh, a) }

// Exp returns eˣ.
func (g *Graph) Exp(a *Tensor) *Tensor { return g.unary("Exp", uExp, a) }

// Sigmoid returns 1/(1+e⁻ˣ).
func (g *Graph) Sigmoid(a *Tensor) *Tensor { return g.unary("Sigmoid", uSigmoid, a) }

// SwiGLU returns silu(gate) * up (same shapes, contiguous f32).
func (g *Graph) SwiGLU(gate, up *Tensor) *Tensor {
	const op = "SwiGLU"
	g.own(op, gate, up)
	g.need(op, gate.dt == F32 && up.dt == F32 && gate.Contiguous() && up.Contiguous(), "%s and %s must be contiguous f32", gate, up)
	g.need(op, gate.ne == up.ne, "gate %s and up %s differ in shape", gate, up)
	return g.wrap(cBinary(g.ctx, bSwiGLU, gate.h, up.h))
}

// Snake returns x + sin²(αx)·invAlpha (the snake activation of audio
// VAEs); alpha and invAlpha (1/α, precomputed with the reference's epsilon)
// must broadcast over x, e.g. [1, C] for x [T, C]. Built from MUL, SIN, SQR,
// MUL, ADD, all of which Metal runs.
func (g *Graph) Snake(x, alpha, invAlpha *Tensor) *Tensor {
	s := g.Sqr(g.Sin(g.Mul(x, alpha)))
	return g.Add(x, g.Mul(s, invAlpha))
}

// Mean returns the mean of each row (axis 0): shape [1, ne1, ne2, ne3].
func (g *Graph) Mean(a *Tensor) *Tensor {
	g.own("Mean", a)
	g.need("Mean", a.dt == F32 && rowsDense(a), "%s must be f32 with dense rows", a)
	return g.wrap(cUnary(g.ctx, uMean, a.h))
}

// SumRows returns the sum of each row (axis 0): shape [1, ne1, ne2, ne3].
func (g *Graph) SumRows(a *Tensor) *Tensor {
	g.own("SumRows", a)
	g.need("SumRows", a.dt == F32 && rowsDense(a), "%s must be f32 with dense rows", a)
	return g.wrap(cUnary(g.ctx, uSumRows, a.h))
}

// SoftMax returns softmax(scale·a + mask) over axis 0. It materialises every
// score, so use it only for small cases; attention goes through Attention.
// mask may be nil; otherwise f16 or f32, contiguous, [ne0, >=ne1, ...].
func (g *Graph) SoftMax(a, mask *Tensor, scale float32) *Tensor {
	const op = "SoftMax"
	g.own(op, a)
	g.need(op, a.dt == F32 && a.Contiguous(), "%s must be contiguous f32", a)
	var mh = mask
	if mask != nil {
		g.own(op, mask)
		g.need(op, (mask.dt == F16 || mask.dt == F32) && mask.Contiguous(), "mask %s must be contiguous f16/f32", mask)
		g.need(op, mask.ne[0] == a.ne[0] && mask.ne[1] >= a.ne[1], "mask %s does not cover %s", mask, a)
		g.need(op, a.ne[2]%mask.ne[2] == 0 && a.ne[3]%mask.ne[3] == 0, "mask %s does not broadcast over %s", mask, a)
		return g.wrap(cSoftMax(g.ctx, a.h, mh.h, scale))
	}
	return g.wrap(cSoftMax(g.ctx, a.h, nil, scale))
}

// Linear returns w·x + bias for weights w [In, Out] (any matmul dtype), x
// [In, N, ...] (f32) and bias [Out] (f32, or nil): PyTorch's nn.Linear with
// its [Out, In] weight memory.
func (g *Graph) Linear(x, w, bias *Tensor) *Tensor {
	y := g.MulMat(w, x)
	if bias != nil {
		y = g.Add(y, bias)
	}
	return y
}

// Clamp returns a (f32) limited to [lo, hi]. ggml's clamp works in place
// on its source, so Clamp clamps a copy and a stays intact.
func (g *Graph) Clamp(a *Tensor, lo, hi float32) *Tensor {
	return g.clampInPlace(g.Cont(a), lo, hi)
}

// clampInPlace clamps a itself (a must not be needed unclamped afterwards).
func (g *Graph) clampInPlace(a *Tensor, lo, hi float32) *Tensor {
	g.own("Clamp", a)
	g.need("Clamp", a.dt == F32 && rowsDense(a), "%s must be f32 with dense rows", a)
	g.need("Clamp", lo <= hi, "empty range [%g, %g]", lo, hi)
	return g.wrap(cClamp(g.ctx, a.h, lo, hi))
}

// Log returns ln(x).
func (g *Graph) Log(a *Tensor) *Tensor { return g.unary("Log", uLog, a) }
