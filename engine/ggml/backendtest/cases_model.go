package backendtest

import (
	"fmt"
	"math"
	"slices"

	"h3studio/engine/ggml"
)

func positions(b *Builder, n, hi int) []int32 {
	p := make([]int32, n)
	for i := range p {
		p[i] = int32(b.R.IntN(hi))
	}
	return p
}

// RoPE cases rotate x [ropeDim, ropeHeads, ropeTokens] unless they say otherwise.
const (
	ropeDim, ropeHeads, ropeTokens = 64, 3, 10
	ropeBase                       = 10000.0
)

// ropeInvFreq is pair i's inverse frequency over a rotation of dims.
func ropeInvFreq(i, dims int) float64 {
	return math.Pow(ropeBase, -2*float64(i)/float64(dims))
}

func ropeCases() []Case {
	return slices.Concat(ropeNeoXCases(), ropeMultiAxisCases(), ropeTableCases())
}

// ropeNeoXCases rotate one position per token, over the whole head or part of it.
func ropeNeoXCases() []Case {
	const d, h, n, base = ropeDim, ropeHeads, ropeTokens, ropeBase
	return []Case{
		{Name: "rope/neox", Tol: TolF16, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, d, h, n)
			p := positions(b, n, 2000)
			want := refRoPEPairs(mk(xv, d, h, n), d, func(tok, i int) float64 { return float64(p[tok]) * ropeInvFreq(i, d) })
			return b.G.RoPE(x, b.Ints("pos", p), ggml.RoPEOptions{Base: base}), want.v
		}},
		{Name: "rope/neox_partial", Tol: TolF16, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, d, h, n)
			p := positions(b, n, 500)
			want := refRoPEPairs(mk(xv, d, h, n), 32, func(tok, i int) float64 { return float64(p[tok]) * ropeInvFreq(i, 32) })
			return b.G.RoPE(x, b.Ints("pos", p), ggml.RoPEOptions{Dims: 32, Base: base}), want.v
		}},
	}
}

// ropeMultiAxisCases take several positions per token (time, row, column)
// and split the pairs between them as the Qwen-VL models do.
func ropeMultiAxisCases() []Case {
	const d, h, n, base = ropeDim, ropeHeads, ropeTokens, ropeBase
	return []Case{
		{Name: "rope/imrope", Tol: TolF16, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			// Qwen3-VL: pair i takes h if i%3==1 && i<3*s1, w if i%3==2 && i<3*s2, else t
			sec := [4]int{12, 10, 10, 0}
			x, xv := b.Rand("x", ggml.F32, 1, d, h, n)
			p := positions(b, 4*n, 300)
			want := refRoPEPairs(mk(xv, d, h, n), d, func(tok, i int) float64 {
				axis := 0
				if i%3 == 1 && i < 3*sec[1] {
					axis = 1
				} else if i%3 == 2 && i < 3*sec[2] {
					axis = 2
				}
				return float64(p[axis*n+tok]) * ropeInvFreq(i, d)
			})
			return b.G.RoPE(x, b.Ints("pos", p), ggml.RoPEOptions{Mode: ggml.RoPEIMRoPE, Base: base, Sections: sec}), want.v
		}},
		{Name: "rope/mrope", Tol: TolF16, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			// Qwen2-VL: contiguous sections t, h, w of pairs
			sec := [4]int{16, 8, 8, 0}
			x, xv := b.Rand("x", ggml.F32, 1, d, h, n)
			p := positions(b, 4*n, 300)
			want := refRoPEPairs(mk(xv, d, h, n), d, func(tok, i int) float64 {
				axis := 0
				if i >= sec[0] && i < sec[0]+sec[1] {
					axis = 1
				} else if i >= sec[0]+sec[1] {
					axis = 2
				}
				return float64(p[axis*n+tok]) * ropeInvFreq(i, d)
			})
			return b.G.RoPE(x, b.Ints("pos", p), ggml.RoPEOptions{Mode: ggml.RoPEMulti, Base: base, Sections: sec}), want.v
		}},
		{Name: "rope/vision", Tol: TolF16, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			// Qwen-VL vision: rotate_half over the whole head; the first d/4
			// frequencies turn with the row, the next d/4 with the column
			x, xv := b.Rand("x", ggml.F32, 1, d, h, n)
			p := positions(b, 4*n, 40)
			want := refRoPEPairs(mk(xv, d, h, n), d, func(tok, i int) float64 {
				if i < d/4 {
					return float64(p[tok]) * ropeInvFreq(i, d/2)
				}
				return float64(p[n+tok]) * ropeInvFreq(i-d/4, d/2)
			})
			return b.G.RoPE(x, b.Ints("pos", p), ggml.RoPEOptions{Mode: ggml.RoPEVision, Dims: d / 2, Base: base, Sections: [4]int{d / 4, d / 4}}), want.v
		}},
	}
}

// ropeTableCases rotate by precomputed cos/sin tables instead of positions.
func ropeTableCases() []Case {
	const d, h, n = ropeDim, ropeHeads, ropeTokens
	return []Case{
		{Name: "rope/table", Tol: TolF32, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			// our own position tables: x [D, N, H] with per-token rows, 24 pairs rotated
			const r = 24
			x, xv := b.Rand("x", ggml.F32, 1, d, n, h)
			ang := b.Normal(r*n, 3)
			cs, sn := make([]float32, r*n), make([]float32, r*n)
			for i, a := range ang {
				cs[i], sn[i] = float32(math.Cos(float64(a))), float32(math.Sin(float64(a)))
			}
			ct, cv := b.Set("cos", ggml.F32, cs, r, n)
			st, sv := b.Set("sin", ggml.F32, sn, r, n)
			src, want := mk(xv, d, n, h), zeros(d, n, h)
			copy(want.v, src.v)
			each([4]int{r, n, h, 1}, func(i, t, hh, _ int) {
				c, s := cv[i+r*t], sv[i+r*t]
				x1, x2 := src.at(i, t, hh, 0), src.at(i+r, t, hh, 0)
				want.set(i, t, hh, 0, x1*c-x2*s)
				want.set(i+r, t, hh, 0, x2*c+x1*s)
			})
			return b.G.RoPETable(x, ct, st), want.v
		}},
	}
}

// attentionCase is q [D, N, H], k/v [D, L, Hkv] through Attention.
func attentionCase(d, n, l, h, hkv, chunk int, causal bool) Case {
	return attentionCaseKV(d, n, l, h, hkv, chunk, causal, ggml.Storage{})
}

func attentionCaseKV(d, n, l, h, hkv, chunk int, causal bool, kvp ggml.Storage) Case {
	tol := TolAttn
	if kvp == ggml.StoreAs(ggml.F32) {
		tol = 1e-9
	}
	return Case{Name: fmt.Sprintf("attention/d%d_n%d_l%d_h%d_kv%d_c%d_causal%v_kv%s", d, n, l, h, hkv, chunk, causal, kvp), Tol: tol,
		Build: func(b *Builder) (*ggml.Tensor, []float64) {
			q, qv := b.Rand("q", ggml.F32, 1, d, n, h)
			k, kv := b.Rand("k", ggml.F32, 1, d, l, hkv)
			v, vv := b.Rand("v", ggml.F32, 1, d, l, hkv)
			y := b.G.Attention(q, k, v, ggml.AttentionOptions{Causal: causal, Chunk: chunk, KV: kvp})
			return y, refAttention(mk(qv, d, n, h), mk(kv, d, l, hkv), mk(vv, d, l, hkv), causal, nil).v
		}}
}

func attentionCases() []Case {
	return []Case{
		attentionCase(128, 150, 170, 4, 4, 64, false),
		attentionCase(64, 200, 200, 4, 2, 64, true), // GQA, causal, several chunks
		attentionCase(72, 90, 130, 2, 1, 0, true),   // prefix-aware causal (keys > queries)
		attentionCase(256, 40, 70, 2, 2, 16, false),
		attentionCaseKV(64, 130, 150, 4, 2, 32, true, ggml.StoreAs(ggml.F32)), // f32 K/V: reference precision
	}
}

func convCases() []Case {
	return []Case{
		{Name: "conv1d/dilated", Tol: TolF32, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 50, 6, 2)
			w, wv := b.Rand("w", ggml.F32, 1, 7, 6, 5)
			want := refConv2D(mk(xv, 50, 1, 6, 2), mk(wv, 7, 1, 6, 5), [2]int{2, 1}, [2]int{9, 0}, [2]int{3, 1})
			return b.G.Conv1D(x, w, 2, 9, 3), want.v
		}},
		{Name: "conv1d/bf16", Tol: TolBF16, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 40, 8)
			w, wv := b.Rand("w", ggml.BF16, 1, 3, 8, 4)
			want := refConv2D(mk(xv, 40, 1, 8), mk(wv, 3, 1, 8, 4), [2]int{1, 1}, [2]int{1, 0}, [2]int{1, 1})
			return b.G.Conv1D(x, w, 1, 1, 1), want.v
		}},
		{Name: "conv_transpose1d", Tol: TolF32, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 20, 6)
			w, wv := b.Rand("w", ggml.F32, 1, 8, 5, 6)
			return b.G.ConvTranspose1D(x, w, 4, 2), refConvT1D(mk(xv, 20, 6), mk(wv, 8, 5, 6), 4, 2).v
		}},
		{Name: "conv2d", Tol: TolF32, Build: func(b *Builder) (*ggml.Tensor, []float64) {
			x, xv := b.Rand("x", ggml.F32, 1, 13, 11, 4, 2)
			w, wv := b.Rand("w", ggml.F32, 1, 3, 3, 4, 6)
			want := refConv2D(mk(xv, 13, 11, 4, 2), mk(wv, 3, 3, 4, 6), [2]int{2, 1}, [2]int{1, 1}, [2]int{1, 2})
			return b.G.Conv2D(x, w, [2]int{2, 1}, [2]int{1, 1}, [2]int{1, 2}), want.v
		}},
		conv3dCase(ggml.PadZeros),
		conv3dCase(ggml.PadReplicate),
	}
}

// conv3dCase: x [W, H, C, T], PyTorch weight [O, C, KT, KH, KW], causal
// temporal padding of KT-1 frames, temporal stride 1 and spatial pad 1.
func conv3dCase(mode ggml.TemporalPad) Case {
	const w, h, c, t, o, kt, kh, kw = 9, 7, 3, 5, 4, 3, 3, 3
	return Case{Name: fmt.Sprintf("conv3d/causal_pad%d", mode), Tol: TolF32, Build: func(b *Builder) (*ggml.Tensor, []float64) {
		x, xv := b.Rand("x", ggml.F32, 1, w, h, c, t)
		tw := b.Normal(o*c*kt*kh*kw, 1)
		wt, _ := b.Set("w", ggml.F32, ggml.Conv3DWeight(tw, o, c, kt, kh, kw), kw, kh, c, o*kt)
		src := mk(xv, w, h, c, t)
		want := zeros(w, h, o, t)
		for ot := range t {
			for k := range kt {
				ft := ot + k - (kt - 1) // causal: output frame ot sees input frames ot-kt+1..ot
				if ft < 0 && mode == ggml.PadZeros {
					continue
				}
				ft = max(ft, 0)
				frame := mk(src.v[src.idx(0, 0, 0, ft):src.idx(0, 0, 0, ft+1)], w, h, c)
				wk := zeros(kw, kh, c, o)
				each(wk.ne, func(i, j, ci, oi int) {
					wk.set(i, j, ci, oi, float64(tw[(((oi*c+ci)*kt+k)*kh+j)*kw+i]))
				})
				y := refConv2D(frame, wk, [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1})
				each(y.ne, func(i, j, oi, _ int) {
					want.set(i, j, oi, ot, want.at(i, j, oi, ot)+y.at(i, j, oi, 0))
				})
			}
		}
		return b.G.Conv3D(x, wt, kt, ggml.Conv3DOptions{Pad: [2]int{1, 1}, CausalT: kt - 1, TPadMode: mode}), want.v
	}}
}
