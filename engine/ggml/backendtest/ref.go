package backendtest

import "math"

// Float64 references of the ops, on tensors in ggml order (index
// i0 + ne0*(i1 + ne1*(i2 + ne2*i3))). They follow the math of each op (and
// PyTorch's conventions where H3's reference code relies on them), not
// ggml's code.

type ten struct {
	ne [4]int
	v  []float64
}

func mk(v []float64, shape ...int) ten {
	t := ten{ne: [4]int{1, 1, 1, 1}, v: v}
	copy(t.ne[:], shape)
	if len(v) != t.ne[0]*t.ne[1]*t.ne[2]*t.ne[3] {
		panic("backendtest: reference shape does not match data")
	}
	return t
}

func zeros(shape ...int) ten {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return mk(make([]float64, n), shape...)
}

func (t ten) idx(i0, i1, i2, i3 int) int {
	return i0 + t.ne[0]*(i1+t.ne[1]*(i2+t.ne[2]*i3))
}

func (t ten) at(i0, i1, i2, i3 int) float64     { return t.v[t.idx(i0, i1, i2, i3)] }
func (t ten) set(i0, i1, i2, i3 int, x float64) { t.v[t.idx(i0, i1, i2, i3)] = x }

// each calls f for every index of shape ne.
func each(ne [4]int, f func(i0, i1, i2, i3 int)) {
	for i3 := range ne[3] {
		for i2 := range ne[2] {
			for i1 := range ne[1] {
				for i0 := range ne[0] {
					f(i0, i1, i2, i3)
				}
			}
		}
	}
}

// refMulMat: a [K, M, A2, A3], b [K, N, B2, B3] -> [M, N, B2, B3], a broadcast.
func refMulMat(a, b ten) ten {
	out := zeros(a.ne[1], b.ne[1], b.ne[2], b.ne[3])
	r2, r3 := b.ne[2]/a.ne[2], b.ne[3]/a.ne[3]
	each(out.ne, func(m, n, i2, i3 int) {
		s := 0.0
		for k := range a.ne[0] {
			s += a.at(k, m, i2/r2, i3/r3) * b.at(k, n, i2, i3)
		}
		out.set(m, n, i2, i3, s)
	})
	return out
}

// refBinary applies f(a, b) with b broadcast over a.
func refBinary(a, b ten, f func(x, y float64) float64) ten {
	out := zeros(a.ne[:]...)
	each(a.ne, func(i0, i1, i2, i3 int) {
		out.set(i0, i1, i2, i3, f(a.at(i0, i1, i2, i3), b.at(i0%b.ne[0], i1%b.ne[1], i2%b.ne[2], i3%b.ne[3])))
	})
	return out
}

func refMap(a ten, f func(float64) float64) ten {
	out := zeros(a.ne[:]...)
	for i, x := range a.v {
		out.v[i] = f(x)
	}
	return out
}

// refNorm normalises rows: rms (x/sqrt(mean x²+eps)) or layer (zero mean, unit variance).
func refNorm(a ten, rms bool, eps float64) ten {
	out := zeros(a.ne[:]...)
	n := a.ne[0]
	for r := 0; r < len(a.v)/n; r++ {
		row := a.v[r*n : (r+1)*n]
		mean := 0.0
		if !rms {
			for _, x := range row {
				mean += x
			}
			mean /= float64(n)
		}
		ss := 0.0
		for _, x := range row {
			ss += (x - mean) * (x - mean)
		}
		inv := 1 / math.Sqrt(ss/float64(n)+eps)
		for i, x := range row {
			out.v[r*n+i] = (x - mean) * inv
		}
	}
	return out
}

// refGroupNorm: a [W, H, C, N], stats over W, H and C/groups channels.
func refGroupNorm(a ten, groups int, eps float64) ten {
	out := zeros(a.ne[:]...)
	cg := a.ne[2] / groups
	plane := a.ne[0] * a.ne[1]
	for n := range a.ne[3] {
		for gi := range groups {
			start := a.idx(0, 0, gi*cg, n)
			seg := a.v[start : start+plane*cg]
			mean, ss := 0.0, 0.0
			for _, x := range seg {
				mean += x
			}
			mean /= float64(len(seg))
			for _, x := range seg {
				ss += (x - mean) * (x - mean)
			}
			inv := 1 / math.Sqrt(ss/float64(len(seg))+eps)
			for i, x := range seg {
				out.v[start+i] = (x - mean) * inv
			}
		}
	}
	return out
}

func gelu(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }
func geluTanh(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}
func silu(x float64) float64    { return x / (1 + math.Exp(-x)) }
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// refRoPEPairs rotates x [D, H, N] with angle(token, pair) for pairs
// (i, i+half) (neox) where half = dims/2; dims beyond `dims` pass through.
func refRoPEPairs(x ten, dims int, angle func(tok, pair int) float64) ten {
	out := zeros(x.ne[:]...)
	copy(out.v, x.v)
	half := dims / 2
	each([4]int{half, x.ne[1], x.ne[2], x.ne[3]}, func(i, h, n, b int) {
		th := angle(n, i)
		c, s := math.Cos(th), math.Sin(th)
		x1, x2 := x.at(i, h, n, b), x.at(i+half, h, n, b)
		out.set(i, h, n, b, x1*c-x2*s)
		out.set(i+half, h, n, b, x2*c+x1*s)
	})
	return out
}

// refAttention: q [D, N, H], k [D, L, Hkv], v [Dv, L, Hkv] -> [Dv, H, N],
// causal: query i sees keys j <= i + L - N. Only rows listed in rows are
// computed (others left 0) when rows is non-nil.
func refAttention(q, k, v ten, causal bool, rows []int) ten {
	d, n, h := q.ne[0], q.ne[1], q.ne[2]
	l, hkv, dv := k.ne[1], k.ne[2], v.ne[0]
	out := zeros(dv, h, n)
	scale := 1 / math.Sqrt(float64(d))
	if rows == nil {
		rows = make([]int, n)
		for i := range rows {
			rows[i] = i
		}
	}
	sc := make([]float64, l)
	for hh := range h {
		kh := hh / (h / hkv)
		for _, i := range rows {
			m := math.Inf(-1)
			for j := range l {
				if causal && j > i+l-n {
					sc[j] = math.Inf(-1)
					continue
				}
				s := 0.0
				for x := range d {
					s += q.at(x, i, hh, 0) * k.at(x, j, kh, 0)
				}
				sc[j] = s * scale
				m = max(m, sc[j])
			}
			sum := 0.0
			for j := range l {
				sc[j] = math.Exp(sc[j] - m)
				sum += sc[j]
			}
			for x := range dv {
				acc := 0.0
				for j := range l {
					acc += sc[j] * v.at(x, j, kh, 0)
				}
				out.set(x, hh, i, 0, acc/sum)
			}
		}
	}
	return out
}

// refConv2D: x [W, H, C, N], w [KW, KH, C, O] (PyTorch cross-correlation).
func refConv2D(x, w ten, s, p, d [2]int) ten {
	ow := (x.ne[0]+2*p[0]-d[0]*(w.ne[0]-1)-1)/s[0] + 1
	oh := (x.ne[1]+2*p[1]-d[1]*(w.ne[1]-1)-1)/s[1] + 1
	out := zeros(ow, oh, w.ne[3], x.ne[3])
	each(out.ne, func(ox, oy, o, n int) {
		acc := 0.0
		for c := range w.ne[2] {
			for ky := range w.ne[1] {
				iy := oy*s[1] - p[1] + ky*d[1]
				if iy < 0 || iy >= x.ne[1] {
					continue
				}
				for kx := range w.ne[0] {
					ix := ox*s[0] - p[0] + kx*d[0]
					if ix < 0 || ix >= x.ne[0] {
						continue
					}
					acc += x.at(ix, iy, c, n) * w.at(kx, ky, c, o)
				}
			}
		}
		out.set(ox, oy, o, n, acc)
	})
	return out
}

// refConvT1D: x [L, Cin], w [K, Cout, Cin] -> [(L-1)s + K - 2p, Cout].
func refConvT1D(x, w ten, s, p int) ten {
	full := (x.ne[0]-1)*s + w.ne[0]
	out := zeros(full-2*p, w.ne[1])
	for i := range x.ne[0] {
		for ci := range x.ne[1] {
			for co := range w.ne[1] {
				for k := range w.ne[0] {
					o := i*s + k - p
					if o >= 0 && o < full-2*p {
						out.v[o+out.ne[0]*co] += x.at(i, ci, 0, 0) * w.at(k, co, ci, 0)
					}
				}
			}
		}
	}
	return out
}

// refBilinear2x is PyTorch's bilinear x2 upsampling (align_corners=False)
// of axes 0 and 1.
func refBilinear2x(x ten) ten {
	out := zeros(2*x.ne[0], 2*x.ne[1], x.ne[2], x.ne[3])
	src := func(o, n int) (int, int, float64) {
		f := max((float64(o)+0.5)/2-0.5, 0)
		i0 := int(math.Floor(f))
		i1 := min(i0+1, n-1)
		return i0, i1, f - float64(i0)
	}
	each(out.ne, func(ox, oy, c, n int) {
		x0, x1, fx := src(ox, x.ne[0])
		y0, y1, fy := src(oy, x.ne[1])
		v := (1-fy)*((1-fx)*x.at(x0, y0, c, n)+fx*x.at(x1, y0, c, n)) +
			fy*((1-fx)*x.at(x0, y1, c, n)+fx*x.at(x1, y1, c, n))
		out.set(ox, oy, c, n, v)
	})
	return out
}
