package backendtest

import (
	"fmt"
	"math"
	"slices"

	"h3studio/engine/ggml"
)

// Cases is the op suite. Shapes are small (the CPU suite runs in seconds)
// but exercise broadcasting, odd sizes, strides and chunking.
func Cases() []Case {
	var cs []Case
	for _, dt := range []ggml.DType{ggml.F32, ggml.F16, ggml.BF16, ggml.Q8_0, ggml.Q4_K} {
		tol := map[ggml.DType]float64{ggml.F32: TolF32, ggml.F16: TolF16, ggml.BF16: TolBF16, ggml.Q8_0: TolQuant, ggml.Q4_K: TolQuant}[dt]
		cs = append(cs, Case{Name: "mul_mat/" + dt.String(), Tol: tol, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			w, wv := b.Rand("w", dt, 1, 256, 48, 2)
			x, xv := b.Rand("x", ggml.F32, 1, 256, 17, 4)
			return b.G.MulMat(w, x), refMulMat(mk(wv, 256, 48, 2), mk(xv, 256, 17, 4)).v
		}})
	}
	binary := []struct {
		name string
		op   func(g *ggml.Graph, a, b *ggml.Tensor) *ggml.Tensor
		f    func(x, y float64) float64
	}{
		{"add", (*ggml.Graph).Add, func(x, y float64) float64 { return x + y }},
		{"sub", (*ggml.Graph).Sub, func(x, y float64) float64 { return x - y }},
		{"mul", (*ggml.Graph).Mul, func(x, y float64) float64 { return x * y }},
		{"div", (*ggml.Graph).Div, func(x, y float64) float64 { return x / y }},
	}
	for _, op := range binary {
		for _, bs := range [][]int{{33, 5, 3}, {33}, {33, 1, 3}, {1, 5, 1}} {
			cs = append(cs, Case{Name: fmt.Sprintf("%s/b%v", op.name, bs), Tol: TolF32, Build: func(b *Builder) (*ggml.Tensor, []float64) {
				x, xv := b.Rand("a", ggml.F32, 1, 33, 5, 3)
				y, yv := b.Rand("b", ggml.F32, 1, bs...)
				if op.name == "div" {
					for i := range yv {
						yv[i] = 2 + yv[i]*yv[i]
					}
					y = b.G.Add(b.G.Sqr(y), b.Scalar(2))
				}
				return op.op(b.G, x, y), refBinary(mk(xv, 33, 5, 3), mk(yv, bs...), op.f).v
			}})
		}
	}
	unary := []struct {
		name string
		op   func(g *ggml.Graph, a *ggml.Tensor) *ggml.Tensor
		f    func(float64) float64
		tol  float64
	}{
		{"silu", (*ggml.Graph).SiLU, silu, 1e-8},
		{"gelu", (*ggml.Graph).GELU, gelu, 1e-8},
		{"gelu_tanh", (*ggml.Graph).GELUTanh, geluTanh, 1e-6}, // ggml-cpu looks it up in an f16 table (GGML_GELU_FP16)
		{"sin", (*ggml.Graph).Sin, math.Sin, TolF32},
		{"cos", (*ggml.Graph).Cos, math.Cos, TolF32},
		{"sqr", (*ggml.Graph).Sqr, func(x float64) float64 { return x * x }, TolF32},
		{"tanh", (*ggml.Graph).Tanh, math.Tanh, 1e-8},
		{"exp", (*ggml.Graph).Exp, math.Exp, 1e-8},
		{"sigmoid", (*ggml.Graph).Sigmoid, sigmoid, 1e-8},
		{"sqrt", func(g *ggml.Graph, a *ggml.Tensor) *ggml.Tensor { return g.Sqrt(g.Sqr(a)) }, math.Abs, 1e-12},
		{"clamp", func(g *ggml.Graph, a *ggml.Tensor) *ggml.Tensor { return g.Clamp(a, -0.5, 1) },
			func(x float64) float64 { return min(max(x, -0.5), 1) }, 0},
		{"log", func(g *ggml.Graph, a *ggml.Tensor) *ggml.Tensor { return g.Log(g.Exp(a)) },
			func(x float64) float64 { return x }, 1e-10},
	}
	for _, op := range unary {
		cs = append(cs, Case{Name: "unary/" + op.name, Tol: op.tol, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 2, 67, 9)
			return op.op(b.G, x), refMap(mk(xv, 67, 9), op.f).v
		}})
	}
	cs = append(cs, opCases()...)
	cs = append(cs, ropeCases()...)
	cs = append(cs, attentionCases()...)
	cs = append(cs, convCases()...)
	return cs
}

// Scalar declares a one-element f32 input.
func (b *Builder) Scalar(x float32) *ggml.Tensor {
	t, _ := b.Set(fmt.Sprintf("scalar%d", len(b.inputs)), ggml.F32, []float32{x}, 1)
	return t
}

// opCases covers the remaining single ops, grouped by kind. TestCPU seeds
// each case by its index, so the groups keep the suite's order.
func opCases() []Case {
	return slices.Concat(normCases(), gatedCases(), reductionCases(), layoutCases(), resampleCases())
}

// normCases covers linear, scale and the three normalisations.
func normCases() []Case {
	return []Case{
		{Name: "linear/q8_0", Tol: TolQuant, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 64, 5)
			w, wv := b.Rand("w", ggml.Q8_0, 1, 64, 12)
			bias, bv := b.Rand("b", ggml.F32, 1, 12)
			want := refBinary(refMulMat(mk(wv, 64, 12), mk(xv, 64, 5)), mk(bv, 12), func(x, y float64) float64 { return x + y })
			return b.G.Linear(x, w, bias), want.v
		}},
		{Name: "scale", Tol: TolF32, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 40, 7)
			return b.G.Scale(x, -0.37), refMap(mk(xv, 40, 7), func(v float64) float64 { return -0.37 * v }).v
		}},
		{Name: "rms_norm", Tol: 1e-10, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 3, 128, 11, 2)
			return b.G.RMSNorm(x, 1e-6), refNorm(mk(xv, 128, 11, 2), true, 1e-6).v
		}},
		{Name: "layer_norm", Tol: 1e-10, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 3, 96, 13)
			return b.G.LayerNorm(x, 1e-5), refNorm(mk(xv, 96, 13), false, 1e-5).v
		}},
		{Name: "group_norm", Tol: 1e-10, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 2, 6, 5, 64, 3)
			return b.G.GroupNorm(x, 32, 1e-6), refGroupNorm(mk(xv, 6, 5, 64, 3), 32, 1e-6).v
		}},
	}
}

// gatedCases covers activations that take a second input: SwiGLU's up
// projection and snake's per-channel alpha.
func gatedCases() []Case {
	return []Case{
		{Name: "swiglu", Tol: 1e-8, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("gate", ggml.F32, 2, 64, 9)
			y, yv := b.Rand("up", ggml.F32, 1, 64, 9)
			return b.G.SwiGLU(x, y), refBinary(mk(xv, 64, 9), mk(yv, 64, 9), func(g, u float64) float64 { return silu(g) * u }).v
		}},
		{Name: "snake", Tol: TolF32, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 50, 8)
			al := b.Normal(8, 1)
			inv := make([]float32, 8)
			for i := range al {
				al[i] = 0.5 + al[i]*al[i]
				inv[i] = 1 / (al[i] + 1e-9)
			}
			a, av := b.Set("alpha", ggml.F32, al, 1, 8)
			ia, iv := b.Set("inv_alpha", ggml.F32, inv, 1, 8)
			want := zeros(50, 8)
			each(want.ne, func(t, c, _, _ int) {
				s := math.Sin(av[c] * xv[t+50*c])
				want.set(t, c, 0, 0, xv[t+50*c]+s*s*iv[c])
			})
			return b.G.Snake(x, a, ia), want.v
		}},
	}
}

// reductionCases covers softmax, mean and row sums, which each reduce along rows.
func reductionCases() []Case {
	return []Case{
		{Name: "softmax", Tol: 1e-10, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 2, 37, 6)
			want := zeros(37, 6)
			for r := range 6 {
				m, s := math.Inf(-1), 0.0
				for i := range 37 {
					m = max(m, 0.5*xv[r*37+i])
				}
				for i := range 37 {
					s += math.Exp(0.5*xv[r*37+i] - m)
				}
				for i := range 37 {
					want.v[r*37+i] = math.Exp(0.5*xv[r*37+i]-m) / s
				}
			}
			return b.G.SoftMax(x, nil, 0.5), want.v
		}},
		{Name: "mean", Tol: 1e-12, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 30, 4)
			want := make([]float64, 4)
			for r := range 4 {
				for i := range 30 {
					want[r] += xv[r*30+i] / 30
				}
			}
			return b.G.Mean(x), want
		}},
		{Name: "sum_rows", Tol: 1e-12, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 30, 4, 2)
			want := make([]float64, 8)
			for r := range 8 {
				for i := range 30 {
					want[r] += xv[r*30+i]
				}
			}
			return b.G.SumRows(x), want
		}},
	}
}

// layoutCases covers views, copies, permutes, concatenation, padding,
// row gathers and casts.
func layoutCases() []Case {
	return []Case{
		{Name: "view_strided_cpy_f16", Tol: TolF16, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			// every other row of x, columns 3..10, copied into an f16 tensor
			x, xv := b.Rand("x", ggml.F32, 1, 16, 10)
			v := b.G.View(x, 3*4, []int{8, 5}, []int{2 * 16 * 4})
			dst := b.G.Input("dst", ggml.F16, 8, 5)
			want := zeros(8, 5)
			each(want.ne, func(i, j, _, _ int) { want.set(i, j, 0, 0, xv[3+i+16*2*j]) })
			return b.G.Cpy(v, dst), want.v
		}},
		{Name: "permute_cont", Tol: 0, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 5, 4, 3, 2)
			src := mk(xv, 5, 4, 3, 2)
			want := zeros(3, 5, 2, 4) // axis0->1, 1->3, 2->0, 3->2
			each(src.ne, func(i0, i1, i2, i3 int) { want.set(i2, i0, i3, i1, src.at(i0, i1, i2, i3)) })
			return b.G.Cont(b.G.Permute(x, 1, 3, 0, 2)), want.v
		}},
		{Name: "concat_pad", Tol: 0, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 6, 3, 2)
			y, yv := b.Rand("y", ggml.F32, 1, 6, 2, 2)
			c := b.G.Concat(x, y, 1)                                // [6, 5, 2]
			p := b.G.Pad(c, 2, 0, 1)                                // [8, 5, 3]
			l := b.G.PadLeft(p, b.G.Zeros(ggml.F32, 8, 4, 3), 1, 3) // [8, 8, 3]
			want := zeros(8, 8, 3)
			each([4]int{6, 5, 2, 1}, func(i, j, k, _ int) {
				v := 0.0
				if j < 3 {
					v = xv[i+6*(j+3*k)]
				} else {
					v = yv[i+6*(j-3+2*k)]
				}
				want.set(i, j+3, k, 0, v)
			})
			return l, want.v
		}},
		{Name: "get_rows", Tol: 0, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("table", ggml.F32, 1, 16, 10)
			idx := []int32{3, 0, 9, 3, 7}
			want := zeros(16, 5)
			for r, i := range idx {
				copy(want.v[r*16:], xv[int(i)*16:int(i+1)*16])
			}
			return b.G.GetRows(x, b.Ints("idx", idx)), want.v
		}},
		{Name: "cast_f16_bf16", Tol: TolBF16, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 64, 3)
			y := b.G.Cast(b.G.Cast(x, ggml.F16), ggml.F32)
			z := b.G.Cast(b.G.Cast(y, ggml.BF16), ggml.F32)
			return z, xv
		}},
	}
}

// resampleCases covers spatial upsampling.
func resampleCases() []Case {
	return []Case{
		{Name: "interpolate_nearest", Tol: 0, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 5, 4, 3)
			src := mk(xv, 5, 4, 3)
			want := zeros(10, 8, 3)
			each(want.ne, func(i, j, c, _ int) { want.set(i, j, c, 0, src.at(i/2, j/2, c, 0)) })
			return b.G.Interpolate(x, ggml.Nearest, 10, 8, 3, 1), want.v
		}},
		{Name: "bilinear_up2", Tol: 1e-12, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 7, 5, 3)
			return b.G.BilinearUp2(x), refBilinear2x(mk(xv, 7, 5, 3)).v
		}},
		{Name: "interpolate_bilinear_cpu", Tol: 1e-12, Fallback: []string{"UPSCALE"}, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 7, 5, 3)
			return b.G.Interpolate(x, ggml.Bilinear, 14, 10, 3, 1), refBilinear2x(mk(xv, 7, 5, 3)).v
		}},
	}
}
