//go:build long

package vae

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"h3studio/engine/ggml"
)

// realDecoder is the release decoder with one block, random weights.
func realDecoder(t testing.TB, o DecodeOptions) (*VideoDecoder, *memSource) {
	cfg := releaseVideoConfig(t)
	cfg.Source.ViT.Layers = 1
	dim, inner := int64(cfg.Dim()), int64(ffnMult*cfg.Dim())
	r := rand.New(rand.NewPCG(1, 2))
	m := newMemSource()
	s := 1 / math.Sqrt(float64(dim))
	m.add(r, "post_quant_conv.weight", 0.2, 0, 24, 24, 1, 1, 1)
	m.add(r, "post_quant_conv.bias", 0.05, 0, 24)
	m.add(r, "decoder.x_embedder.weight", 0.2, 0, dim, 24)
	m.add(r, "decoder.x_embedder.bias", 0.05, 0, dim)
	m.add(r, "decoder.register_tokens", 1, 0, 1, registerTokens, dim)
	p := "decoder.transformer_blocks.0."
	m.add(r, p+"norm1.weight", 0.1, 1, dim)
	m.add(r, p+"attn.to_qkv.weight", s, 0, 3*dim, dim)
	m.add(r, p+"attn.to_qkv.bias", 0.05, 0, 3*dim)
	m.add(r, p+"attn.to_out.weight", s, 0, dim, dim)
	m.add(r, p+"attn.to_out.bias", 0.05, 0, dim)
	m.add(r, p+"scale1", 0.1, 0.4, dim)
	m.add(r, p+"norm2.weight", 0.1, 1, dim)
	m.add(r, p+"ff.w1.weight", s, 0, 2*inner, dim)
	m.add(r, p+"ff.w1.bias", 0.05, 0, 2*inner)
	m.add(r, p+"ff.w2.weight", 1/math.Sqrt(float64(inner)), 0, dim, inner)
	m.add(r, p+"ff.w2.bias", 0.05, 0, dim)
	m.add(r, p+"scale2", 0.1, 0.4, dim)
	m.add(r, "decoder.norm_out.weight", 0.1, 1, dim)
	m.add(r, "decoder.norm_out.bias", 0.05, 0, dim)
	m.add(r, "decoder.proj_out.weight", s, 0, 3*4*16*16, dim)
	m.add(r, "decoder.proj_out.bias", 0.05, 0, 3*4*16*16)
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU})
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(b.Close)
	d, err := LoadVideoDecoder(b, m, cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d, m
}

// One ViT decoder block at the release's width (2048 = 32 heads x 64, RoPE
// over 48 dims, theta 100) on CPU, against a float64 reference of the same
// math written here from the reference's equations.
func TestRealConfigDecoderBlock(t *testing.T) {
	d, m := realDecoder(t, DecodeOptions{Precision: exactKV})
	a := &auditor{t: t}
	d.inspect = a.inspect
	r := rand.New(rand.NewPCG(5, 6))
	z := newVol(24, 2, 2, 3)
	for i := range z.d {
		z.d[i] = float32(r.NormFloat64())
	}
	start := time.Now()
	got, err := d.decodeTile(context.Background(), z)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("graph: %v for %d tokens", time.Since(start), 12+decoderSuffix)
	want := refDecoderBlock(m, d.cfg, z)
	checkRel(t, "decoder, 1 block at dim 2048", got.d, d.net.unpatchify(want, z.t, z.h, z.w).d, tolF32)
	a.done()
}

// BenchmarkRealConfigDecoderTile runs one release decoder block on a full
// 256-px tile of one 7-latent chunk (1797 tokens), f16 weights and the
// backend's attention, and reports GFLOP/s (matmuls plus attention).
func BenchmarkRealConfigDecoderTile(b *testing.B) {
	d, _ := realDecoder(b, DecodeOptions{Precision: ggml.Precision{Weights: ggml.StoreAs(ggml.F16)}})
	z := newVol(24, 7, 16, 16)
	for i := range z.d {
		z.d[i] = float32(math.Sin(float64(i)))
	}
	s := float64(7*16*16 + decoderSuffix)
	dim := float64(d.cfg.Dim())
	params := dim*3*dim + dim*dim + dim*8*dim + 4*dim*dim // qkv, out, w1, w2
	flops := 2*s*params + 4*s*s*dim + 2*7*16*16*dim*3072
	for b.Loop() {
		if _, err := d.decodeTile(context.Background(), z); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// refDecoderBlock is post_quant_conv, x_embedder, one TransformerBlock,
// norm_out and proj_out in float64, returning the patch rows as float32.
func refDecoderBlock(m *memSource, cfg *VideoConfig, z vol) []float32 {
	x := refTokens(m, cfg, z)
	n := z.t * z.h * z.w
	refAttention(m, cfg, x, func(tok, pair int) float64 { return refAngle(cfg, z, tok, pair) })
	refFFN(m, cfg, x)
	dim := cfg.Dim()
	nw, nb := m.get("decoder.norm_out.weight"), m.get("decoder.norm_out.bias")
	proj := m.lin("decoder.proj_out", dim)
	var rows []float32
	for tok := range n {
		var mean, vr float64
		for _, e := range x[tok] {
			mean += e
		}
		mean /= float64(dim)
		for _, e := range x[tok] {
			vr += (e - mean) * (e - mean)
		}
		sd := math.Sqrt(vr/float64(dim) + vitEps)
		ln := make([]float64, dim)
		for i, e := range x[tok] {
			ln[i] = (e-mean)/sd*float64(nw[i]) + float64(nb[i])
		}
		for _, e := range proj(ln) {
			rows = append(rows, float32(e))
		}
	}
	return rows
}

// refTokens embeds the voxels and appends the registers and a zero token.
func refTokens(m *memSource, cfg *VideoConfig, z vol) [][]float64 {
	dim, n := cfg.Dim(), z.t*z.h*z.w
	post, emb := m.lin("post_quant_conv", 24), m.lin("decoder.x_embedder", 24)
	var x [][]float64
	for tok := range n {
		v := make([]float64, 24)
		for c := range 24 {
			v[c] = float64(z.d[c*n+tok])
		}
		x = append(x, emb(post(v)))
	}
	reg := m.get("decoder.register_tokens")
	for i := range registerTokens {
		row := make([]float64, dim)
		for j := range dim {
			row[j] = float64(reg[i*dim+j])
		}
		x = append(x, row)
	}
	return append(x, make([]float64, dim))
}

// refAngle is the RoPE angle of a token's pair: cell centres in (-1, 1) per
// axis (suffix tokens at 0), 2π·coord·theta^(-6f/rot).
func refAngle(cfg *VideoConfig, z vol, tok, pair int) float64 {
	n := z.t * z.h * z.w
	if tok >= n {
		return 0
	}
	rot := int(float64(cfg.Source.ViT.DimHead) * cfg.Source.ViT.RopeDimRatio)
	freqs := rot / 6
	idx := [3]int{tok / (z.h * z.w), tok / z.w % z.h, tok % z.w}
	size := [3]int{z.t, z.h, z.w}
	ax, f := pair/freqs, pair%freqs
	coord := (2*float64(idx[ax])+1)/float64(size[ax]) - 1
	return 2 * math.Pi * coord * math.Pow(cfg.Source.ViT.RopeTheta, -float64(6*f)/float64(rot))
}

func refRMS(v []float64, w []float32) []float64 {
	var ss float64
	for _, e := range v {
		ss += e * e
	}
	k := 1 / math.Sqrt(ss/float64(len(v))+vitEps)
	out := make([]float64, len(v))
	for i, e := range v {
		out[i] = e * k
		if w != nil {
			out[i] *= float64(w[i])
		}
	}
	return out
}

// refAttention adds the block's scaled attention branch to x in place.
func refAttention(m *memSource, cfg *VideoConfig, x [][]float64, angle func(tok, pair int) float64) {
	dim, heads, dh := cfg.Dim(), cfg.Source.ViT.Heads, cfg.Source.ViT.DimHead
	half := int(float64(dh)*cfg.Source.ViT.RopeDimRatio) / 2
	p := "decoder.transformer_blocks.0."
	qkvL, outL := m.lin(p+"attn.to_qkv", dim), m.lin(p+"attn.to_out", dim)
	S := len(x)
	q, k, v := make([][][]float64, heads), make([][][]float64, heads), make([][][]float64, heads)
	for tok := range S {
		qkv := qkvL(refRMS(x[tok], m.get(p+"norm1.weight")))
		for h := range heads {
			base := h * 3 * dh
			qh, kh := refRMS(qkv[base:base+dh], nil), refRMS(qkv[base+dh:base+2*dh], nil)
			for pr := range half {
				c, s := math.Cos(angle(tok, pr)), math.Sin(angle(tok, pr))
				for _, u := range [][]float64{qh, kh} {
					a, b := u[pr], u[pr+half]
					u[pr], u[pr+half] = a*c-b*s, b*c+a*s
				}
			}
			q[h], k[h], v[h] = append(q[h], qh), append(k[h], kh), append(v[h], qkv[base+2*dh:base+3*dh])
		}
	}
	scale1 := m.get(p + "scale1")
	outs := make([][]float64, S)
	for tok := range S {
		att := make([]float64, dim)
		for h := range heads {
			sc := make([]float64, S)
			mx := math.Inf(-1)
			for j := range S {
				for e := range dh {
					sc[j] += q[h][tok][e] * k[h][j][e]
				}
				sc[j] /= math.Sqrt(float64(dh))
				mx = math.Max(mx, sc[j])
			}
			var sum float64
			for j := range sc {
				sc[j] = math.Exp(sc[j] - mx)
				sum += sc[j]
			}
			for j := range S {
				for e := range dh {
					att[h*dh+e] += sc[j] / sum * v[h][j][e]
				}
			}
		}
		outs[tok] = outL(att)
	}
	for tok := range S {
		for i := range dim {
			x[tok][i] += outs[tok][i] * float64(scale1[i])
		}
	}
}

// refFFN adds the block's scaled gated-SiLU branch to x in place.
func refFFN(m *memSource, cfg *VideoConfig, x [][]float64) {
	dim := cfg.Dim()
	inner := ffnMult * dim
	p := "decoder.transformer_blocks.0."
	w1, w2 := m.lin(p+"ff.w1", dim), m.lin(p+"ff.w2", inner)
	scale2 := m.get(p + "scale2")
	for tok := range x {
		f := w1(refRMS(x[tok], m.get(p+"norm2.weight")))
		g := make([]float64, inner)
		for i := range inner {
			a := f[i]
			g[i] = a / (1 + math.Exp(-a)) * f[inner+i]
		}
		y := w2(g)
		for i := range dim {
			x[tok][i] += y[i] * float64(scale2[i])
		}
	}
}

// One BigVGAN stage at the release's widths (ups.0: 1024 -> 512, kernel 9,
// stride 5; three AMP resblocks at 512 channels, kernels 3/7/11) on CPU:
// shapes, finiteness and time.
func TestRealConfigBigVGANStage(t *testing.T) {
	const cin, cout, k, rate, steps = 1024, 512, 9, 5, 16
	r := rand.New(rand.NewPCG(3, 4))
	m := newMemSource()
	m.add(r, "decoder.ups.0.0.weight_v", 1, 0, cin, cout, k)
	m.add(r, "decoder.ups.0.0.weight_g", 0.05, 0.3, cin, 1, 1)
	m.add(r, "decoder.ups.0.0.bias", 0.05, 0, cout)
	net := struct {
		Up  upStage    `st:"decoder.ups.0"`
		Res []ampBlock `st:"decoder.resblocks"`
	}{Up: upStage{convT1d{cin: cin, cout: cout, k: k, stride: rate, pad: (k - rate) / 2}}}
	for j, rk := range audioResKernels {
		net.Res = append(net.Res, newAMPBlock(cout, rk))
		q := fmt.Sprintf("decoder.resblocks.%d", j)
		for a := range 6 {
			n := fmt.Sprintf("%s.activations.%d", q, a)
			m.add(r, n+".act.alpha", 0.2, 0, cout)
			m.add(r, n+".act.beta", 0.2, 0, cout)
			m.add(r, n+".upsample.filter", 0.1, 0.08, 1, 1, audioFilterTaps)
			m.add(r, n+".downsample.lowpass.filter", 0.1, 0.08, 1, 1, audioFilterTaps)
		}
		for pi := range audioResDilations {
			for _, c := range []string{"convs1", "convs2"} {
				n := fmt.Sprintf("%s.%s.%d", q, c, pi)
				m.add(r, n+".weight_v", 1, 0, cout, cout, int64(rk))
				m.add(r, n+".weight_g", 0.02, 0.1, cout, 1, 1)
				m.add(r, n+".bias", 0.05, 0, cout)
			}
		}
	}
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU})
	if err != nil {
		t.Skip(err)
	}
	defer b.Close()
	ws, err := loadNet(b, m, &net, ggml.F32)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Free()
	g := b.NewGraph(0)
	defer g.Free()
	x := g.Input("x", ggml.F32, steps, cin, stereo)
	xs := make([]float32, steps*cin*stereo)
	for i := range xs {
		xs[i] = float32(r.NormFloat64())
	}
	x.SetF32(xs)
	y := net.Up.Conv.forward(g, x)
	var sum *ggml.Tensor
	for j := range net.Res {
		o := net.Res[j].Forward(g, y)
		if sum == nil {
			sum = o
		} else {
			sum = g.Add(sum, o)
		}
	}
	out := g.Scale(sum, 1.0/3)
	g.Output(out)
	(&auditor{t: t}).inspect(g)
	start := time.Now()
	if err := g.Compute(); err != nil {
		t.Fatal(err)
	}
	if out.Ne(0) != steps*rate || out.Ne(1) != cout || out.Ne(2) != stereo {
		t.Fatalf("stage output %v, want [%d %d %d]", out.Shape(), steps*rate, cout, stereo)
	}
	var ss float64
	for _, v := range out.F32() {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatal("non-finite output")
		}
		ss += float64(v) * float64(v)
	}
	t.Logf("stage 0 at 1024->512 ch, %d -> %d samples x 2: %v, rms %.3g", steps, steps*rate, time.Since(start), math.Sqrt(ss/float64(out.Elements())))
}
