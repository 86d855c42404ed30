package textenc

import (
	"math"
	"testing"

	"h3studio/engine/weights/safetensors"
)

// ref64 is a float64 Go transcription of the reference math (HF
// modeling_qwen3_vl.py), written independently of the ggml graphs: it
// checks our reading of the reference against the fixtures, and serves as
// the oracle for inputs no fixture covers (long sequences, other configs).
type ref64 struct {
	cfg Config
	w   func(name string) []float64
}

func newRef64(t *testing.T, f *fixture) *ref64 {
	cache := map[string][]float64{}
	return &ref64{cfg: f.cfg, w: func(name string) []float64 {
		if v, ok := cache[name]; ok {
			return v
		}
		v32, _ := readF32(t, f.model, name)
		v := make([]float64, len(v32))
		for i, x := range v32 {
			v[i] = float64(x)
		}
		cache[name] = v
		return v
	}}
}

// linear: x [n, in] by weight [out, in] (+ bias [out]) -> [n, out].
func linear64(x []float64, n, in int, w, b []float64) []float64 {
	out := len(w) / in
	y := make([]float64, n*out)
	for r := 0; r < n; r++ {
		xr := x[r*in : (r+1)*in]
		for o := 0; o < out; o++ {
			wr := w[o*in : (o+1)*in]
			s := 0.0
			for i, v := range xr {
				s += v * wr[i]
			}
			if b != nil {
				s += b[o]
			}
			y[r*out+o] = s
		}
	}
	return y
}

func rmsNorm64(x []float64, dim int, w []float64, eps float64) []float64 {
	y := make([]float64, len(x))
	for r := 0; r < len(x)/dim; r++ {
		xr := x[r*dim : (r+1)*dim]
		ss := 0.0
		for _, v := range xr {
			ss += v * v
		}
		inv := 1 / math.Sqrt(ss/float64(dim)+eps)
		for i, v := range xr {
			y[r*dim+i] = v * inv * w[i]
		}
	}
	return y
}

func layerNorm64(x []float64, dim int, w, b []float64, eps float64) []float64 {
	y := make([]float64, len(x))
	for r := 0; r < len(x)/dim; r++ {
		xr := x[r*dim : (r+1)*dim]
		mean, v2 := 0.0, 0.0
		for _, v := range xr {
			mean += v
		}
		mean /= float64(dim)
		for _, v := range xr {
			v2 += (v - mean) * (v - mean)
		}
		inv := 1 / math.Sqrt(v2/float64(dim)+eps)
		for i, v := range xr {
			y[r*dim+i] = (v-mean)*inv*w[i] + b[i]
		}
	}
	return y
}

func geluTanh64(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}
func geluErf64(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

// attend64 adds one query's attention, softmax_j(q·k_j / sqrt(len(q)))
// weighting v_j over keys j < n, into out; key(j) and val(j) return key
// and value j.
func attend64(q []float64, n int, key, val func(j int) []float64, out []float64) {
	sc := make([]float64, n)
	scale := 1 / math.Sqrt(float64(len(q)))
	m := math.Inf(-1)
	for j := range sc {
		d := 0.0
		for i, kv := range key(j) {
			d += q[i] * kv
		}
		sc[j] = d * scale
		m = math.Max(m, sc[j])
	}
	sum := 0.0
	for j := range sc {
		sc[j] = math.Exp(sc[j] - m)
		sum += sc[j]
	}
	for j := range sc {
		w := sc[j] / sum
		for i, vv := range val(j) {
			out[i] += w * vv
		}
	}
}

// gqaRows64 returns accessors of KV head kh's key and value rows in k, v
// (row-major [tokens, KV heads, hd]).
func gqaRows64(k, v []float64, KV, hd, kh int) (key, val func(j int) []float64) {
	at := func(x []float64) func(j int) []float64 {
		return func(j int) []float64 { return x[(j*KV+kh)*hd : (j*KV+kh+1)*hd] }
	}
	return at(k), at(v)
}

func silu64(x float64) float64 { return x / (1 + math.Exp(-x)) }

// rotateHalf64 rotates pairs (d, d+n/2) of v by the given angles.
func rotateHalf64(v []float64, ang []float64) {
	h := len(v) / 2
	for d := 0; d < h; d++ {
		c, s := math.Cos(ang[d]), math.Sin(ang[d])
		a, b := v[d], v[d+h]
		v[d], v[d+h] = a*c-b*s, a*s+b*c
	}
}

// mropeAngles64 is Qwen3-VL's interleaved mRoPE: pair i rotates with the
// position of axis i%3 while i is inside that axis' section, else with t.
func (r *ref64) mropeAngles64(t, h, w int) []float64 {
	tc := r.cfg.Text
	half := tc.HeadDim / 2
	sec := tc.RoPE.Section
	ang := make([]float64, half)
	for i := 0; i < half; i++ {
		p := t
		switch {
		case i%3 == 1 && i < 3*sec[1]:
			p = h
		case i%3 == 2 && i < 3*sec[2]:
			p = w
		}
		inv := math.Pow(tc.RoPETheta, -float64(2*i)/float64(tc.HeadDim))
		ang[i] = float64(p) * inv
	}
	return ang
}

// textLayer64 runs language layer li over x [S, hidden] with positions
// pos[axis][token]; rows >= upto are not computed (their output is zero).
func (r *ref64) textLayer64(li int, x []float64, S int, pos [3][]int32, upto int) []float64 {
	tc := r.cfg.Text
	D, H, KV, hd := tc.Hidden, tc.Heads, tc.KVHeads, tc.HeadDim
	eps := float64(tc.Eps)
	p := "model.language_model.layers." + itoa(li) + "."
	xs := x[:upto*D]
	hn := rmsNorm64(xs, D, r.w(p+"input_layernorm.weight"), eps)
	q := linear64(hn, upto, D, r.w(p+"self_attn.q_proj.weight"), nil)
	k := linear64(hn, upto, D, r.w(p+"self_attn.k_proj.weight"), nil)
	v := linear64(hn, upto, D, r.w(p+"self_attn.v_proj.weight"), nil)
	q = rmsNorm64(q, hd, r.w(p+"self_attn.q_norm.weight"), eps)
	k = rmsNorm64(k, hd, r.w(p+"self_attn.k_norm.weight"), eps)
	for s := 0; s < upto; s++ {
		ang := r.mropeAngles64(int(pos[0][s]), int(pos[1][s]), int(pos[2][s]))
		for h := 0; h < H; h++ {
			rotateHalf64(q[(s*H+h)*hd:(s*H+h+1)*hd], ang)
		}
		for h := 0; h < KV; h++ {
			rotateHalf64(k[(s*KV+h)*hd:(s*KV+h+1)*hd], ang)
		}
	}
	att := make([]float64, upto*H*hd)
	for s := 0; s < upto; s++ {
		for h := 0; h < H; h++ {
			key, val := gqaRows64(k, v, KV, hd, h/(H/KV))
			attend64(q[(s*H+h)*hd:(s*H+h+1)*hd], s+1, key, val, att[(s*H+h)*hd:(s*H+h+1)*hd])
		}
	}
	ao := linear64(att, upto, H*hd, r.w(p+"self_attn.o_proj.weight"), nil)
	out := make([]float64, S*D)
	for i := range ao {
		out[i] = xs[i] + ao[i]
	}
	hn = rmsNorm64(out[:upto*D], D, r.w(p+"post_attention_layernorm.weight"), eps)
	g := linear64(hn, upto, D, r.w(p+"mlp.gate_proj.weight"), nil)
	u := linear64(hn, upto, D, r.w(p+"mlp.up_proj.weight"), nil)
	for i := range g {
		g[i] = silu64(g[i]) * u[i]
	}
	dn := linear64(g, upto, tc.Intermediate, r.w(p+"mlp.down_proj.weight"), nil)
	for i := range dn {
		out[i] += dn[i]
	}
	return out
}

// textModel64 runs layers 0..n-1 with deepstack features added at the
// visual rows after layers 0..len(deepstack)-1.
func (r *ref64) textModel64(embeds []float64, S int, pos [3][]int32, n int, visual []bool, deepstack [][]float64) []float64 {
	x := embeds
	D := r.cfg.Text.Hidden
	for li := 0; li < n; li++ {
		x = r.textLayer64(li, x, S, pos, S)
		if li < len(deepstack) {
			j := 0
			for s := 0; s < S; s++ {
				if visual[s] {
					for i := 0; i < D; i++ {
						x[s*D+i] += deepstack[li][j*D+i]
					}
					j++
				}
			}
		}
	}
	return x
}

func (r *ref64) embed64(ids []int32) []float64 {
	D := r.cfg.Text.Hidden
	tab := r.w("model.language_model.embed_tokens.weight")
	out := make([]float64, len(ids)*D)
	for s, id := range ids {
		copy(out[s*D:(s+1)*D], tab[int(id)*D:(int(id)+1)*D])
	}
	return out
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// textLayerRows64 is textLayer64 evaluated only at the given rows: keys and
// values for every row (linear), attention and MLP for the chosen rows.
func (r *ref64) textLayerRows64(li int, x []float64, S int, pos [3][]int32, rows []int) [][]float64 {
	tc := r.cfg.Text
	D, H, KV, hd := tc.Hidden, tc.Heads, tc.KVHeads, tc.HeadDim
	eps := float64(tc.Eps)
	p := "model.language_model.layers." + itoa(li) + "."
	hn := rmsNorm64(x, D, r.w(p+"input_layernorm.weight"), eps)
	k := rmsNorm64(linear64(hn, S, D, r.w(p+"self_attn.k_proj.weight"), nil), hd, r.w(p+"self_attn.k_norm.weight"), eps)
	v := linear64(hn, S, D, r.w(p+"self_attn.v_proj.weight"), nil)
	for s := 0; s < S; s++ {
		ang := r.mropeAngles64(int(pos[0][s]), int(pos[1][s]), int(pos[2][s]))
		for h := 0; h < KV; h++ {
			rotateHalf64(k[(s*KV+h)*hd:(s*KV+h+1)*hd], ang)
		}
	}
	var out [][]float64
	for _, s := range rows {
		hs := hn[s*D : (s+1)*D]
		q := rmsNorm64(linear64(hs, 1, D, r.w(p+"self_attn.q_proj.weight"), nil), hd, r.w(p+"self_attn.q_norm.weight"), eps)
		ang := r.mropeAngles64(int(pos[0][s]), int(pos[1][s]), int(pos[2][s]))
		att := make([]float64, H*hd)
		for h := 0; h < H; h++ {
			qv := q[h*hd : (h+1)*hd]
			rotateHalf64(qv, ang)
			key, val := gqaRows64(k, v, KV, hd, h/(H/KV))
			attend64(qv, s+1, key, val, att[h*hd:(h+1)*hd])
		}
		y := linear64(att, 1, H*hd, r.w(p+"self_attn.o_proj.weight"), nil)
		for i := range y {
			y[i] += x[s*D+i]
		}
		h2 := rmsNorm64(y, D, r.w(p+"post_attention_layernorm.weight"), eps)
		g := linear64(h2, 1, D, r.w(p+"mlp.gate_proj.weight"), nil)
		u := linear64(h2, 1, D, r.w(p+"mlp.up_proj.weight"), nil)
		for i := range g {
			g[i] = silu64(g[i]) * u[i]
		}
		dn := linear64(g, 1, tc.Intermediate, r.w(p+"mlp.down_proj.weight"), nil)
		for i := range y {
			y[i] += dn[i]
		}
		out = append(out, y)
	}
	return out
}

// newRef64Source is a float64 reference over any weight source.
func newRef64Source(t *testing.T, cfg Config, src interface {
	Data(string) ([]byte, bool)
}, dtype func(string) string) *ref64 {
	cache := map[string][]float64{}
	return &ref64{cfg: cfg, w: func(name string) []float64 {
		if v, ok := cache[name]; ok {
			return v
		}
		data, ok := src.Data(name)
		if !ok {
			t.Fatalf("reference: tensor %s missing", name)
		}
		v32, err := safetensors.ToFloat32(safetensors.DType(dtype(name)), data)
		if err != nil {
			t.Fatal(err)
		}
		cache[name] = toF64(v32)
		return cache[name]
	}}
}
