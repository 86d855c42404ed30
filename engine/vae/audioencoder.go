package vae

import (
	"fmt"
	"math"

	"h3studio/engine/ggml"
	"h3studio/engine/tap"
)

// Audio encoder: DAC-style strided convolutions with Snake (weight-normalised
// in the checkpoint), then the attention projection (pre_block) and
// mean_proj. Activations are ggml [L, C, stereo]; the mono model runs both
// channels as a batch of two.
// ref: ComfyUI comfy/ldm/minimax/audio_vae.py Encoder, EncoderBlock,
// ResidualUnit, Snake1d, AttnProjection, CausalAttention, GeGluMlp.

// conv1d is a Conv1d with PyTorch's [Cout, Cin, K] weight (ggml [K, Cin, Cout]).
type conv1d struct {
	W, B                *ggml.Tensor
	stride, pad, dilate int
}

// loadWNConv1D loads a weight-normalised conv (weight_g, weight_v), folded.
func loadWNConv1D(l *loader, c *conv1d, name string, cin, cout, k, stride, pad, dilate int, bias bool) {
	c.stride, c.pad, c.dilate = stride, pad, dilate
	l.put(&c.W, name+".weight", l.weightNorm(name, cout, cin, k), k, cin, cout)
	if bias {
		l.tensor(&c.B, name+".bias", []int{cout}, 1, cout, 1)
	}
}

func (c *conv1d) forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	y := g.Conv1D(x, c.W, c.stride, c.pad, c.dilate)
	if c.B != nil {
		y = g.Add(y, c.B)
	}
	return y
}

// snake is Snake1d: x + sin²(αx)/(α + 1e-9), α per channel ([1, C, 1]).
type snake struct{ Alpha, Inv *ggml.Tensor }

func loadSnake(l *loader, s *snake, name string, c int) {
	a := l.read(name, 1, c, 1)
	if a == nil {
		return
	}
	inv := make([]float32, c)
	for i, v := range a {
		inv[i] = float32(1 / (float64(v) + audioSnakeEps))
	}
	l.put(&s.Alpha, name, a, 1, c, 1)
	l.put(&s.Inv, name+".inv", inv, 1, c, 1)
}

func (s *snake) forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	return g.Snake(x, s.Alpha, s.Inv)
}

type residualUnit struct {
	Act1, Act2   snake
	Conv1, Conv2 conv1d
}

type encoderStage struct {
	Units [3]residualUnit
	Act   snake
	Down  conv1d
}

type layerNorm struct{ W, B *ggml.Tensor }

func loadLayerNorm(l *loader, n *layerNorm, name string, c int) {
	l.tensor(&n.W, name+".weight", []int{c}, c)
	l.tensor(&n.B, name+".bias", []int{c}, c)
}

func (n *layerNorm) forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	return g.Add(g.Mul(g.LayerNorm(x, audioLayerNormEp), n.W), n.B)
}

type linear struct{ W, B *ggml.Tensor }

func (w *linear) forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	return g.Add(g.MulMat(w.W, x), w.B)
}

// audioEncoder is Encoder + pre_block + mean_proj.
type audioEncoder struct {
	In     conv1d
	Stages []encoderStage
	Act    snake
	Out    conv1d

	Norm1, Norm2, Norm3 layerNorm
	QKV                 *ggml.Tensor // [D, 3D], no bias
	QBias, VBias        *ggml.Tensor // [D]
	AttnProj, Proj      linear
	MLPNorm             layerNorm
	W0, W1, W2          linear
	Mean                linear

	heads, dim, channels int
}

func loadAudioEncoder(l *loader, c *AudioConfig) *audioEncoder {
	m := &c.Model
	e := &audioEncoder{Stages: make([]encoderStage, len(m.EncoderRates)), heads: m.Heads, dim: m.LatentDim, channels: c.LatentChannels}
	ch := m.EncoderDim
	loadWNConv1D(l, &e.In, "encoder.block.0", 1, ch, 7, 1, 3, 1, true)
	for s, stride := range m.EncoderRates {
		st := &e.Stages[s]
		p := fmt.Sprintf("encoder.block.%d", s+1)
		for r, d := range audioEncDilations {
			u := &st.Units[r]
			q := fmt.Sprintf("%s.block.%d.block", p, r)
			loadSnake(l, &u.Act1, q+".0.alpha", ch)
			loadWNConv1D(l, &u.Conv1, q+".1", ch, ch, 7, 1, 3*d, d, true)
			loadSnake(l, &u.Act2, q+".2.alpha", ch)
			loadWNConv1D(l, &u.Conv2, q+".3", ch, ch, 1, 1, 0, 1, true)
		}
		loadSnake(l, &st.Act, p+".block.3.alpha", ch)
		loadWNConv1D(l, &st.Down, p+".block.4", ch, 2*ch, 2*stride, stride, (stride+1)/2, 1, true)
		ch *= 2
	}
	n := len(m.EncoderRates)
	loadSnake(l, &e.Act, fmt.Sprintf("encoder.block.%d.alpha", n+1), ch)
	loadWNConv1D(l, &e.Out, fmt.Sprintf("encoder.block.%d", n+2), ch, m.LatentDim, 3, 1, 1, 1, true)

	D, C := m.LatentDim, c.LatentChannels
	loadLayerNorm(l, &e.Norm1, "pre_block.norm1", D)
	loadLayerNorm(l, &e.Norm3, "pre_block.norm3", D)
	loadLayerNorm(l, &e.Norm2, "pre_block.norm2", C)
	l.tensor(&e.QKV, "pre_block.attn.qkv.weight", []int{3 * D, D}, D, 3*D)
	l.tensor(&e.QBias, "pre_block.attn.q_bias", []int{D}, D/m.Heads, m.Heads)
	l.tensor(&e.VBias, "pre_block.attn.v_bias", []int{D}, D/m.Heads, m.Heads)
	l.linear(&e.AttnProj.W, &e.AttnProj.B, "pre_block.attn.proj", C, C)
	l.linear(&e.Proj.W, &e.Proj.B, "pre_block.proj", D, C)
	loadLayerNorm(l, &e.MLPNorm, "pre_block.mlp.norm", C)
	l.linear(&e.W0.W, &e.W0.B, "pre_block.mlp.w0", C, 2*C)
	l.linear(&e.W1.W, &e.W1.B, "pre_block.mlp.w1", C, 2*C)
	l.linear(&e.W2.W, &e.W2.B, "pre_block.mlp.w2", 2*C, C)
	if raw := l.read("mean_proj.weight", C, C, 1); raw != nil {
		l.put(&e.Mean.W, "mean_proj.weight", raw, C, C)
	}
	l.tensor(&e.Mean.B, "mean_proj.bias", []int{C}, C)
	return e
}

// Forward maps waveforms x [L, 1, 2] (L a multiple of the hop) to the
// posterior mean [C, L/hop, 2] (channels first).
func (e *audioEncoder) Forward(g *ggml.Graph, x *ggml.Tensor, kv ggml.Storage, tp *tap.Graph) *ggml.Tensor {
	h := e.In.forward(g, x)
	tp.Mark("enc.block.0", h)
	for s := range e.Stages {
		st := &e.Stages[s]
		for r := range st.Units {
			u := &st.Units[r]
			y := u.Conv2.forward(g, u.Act2.forward(g, u.Conv1.forward(g, u.Act1.forward(g, h))))
			h = g.Add(h, y)
			if s == 0 {
				tp.Mark(fmt.Sprintf("enc.block.1.block.%d", r), h)
			}
		}
		h = st.Down.forward(g, st.Act.forward(g, h))
		tp.Mark(fmt.Sprintf("enc.block.%d", s+1), h)
	}
	h = e.Out.forward(g, e.Act.forward(g, h)) // [T, D, 2]
	tp.Mark("enc.out", h)
	h = g.Cont(g.Permute(h, 1, 0, 2, 3)) // [D, T, 2]
	a := e.attention(g, e.Norm1.forward(g, h), kv)
	tp.Mark("pre_block.attn", a)
	h = g.Add(e.Proj.forward(g, e.Norm3.forward(g, h)), a) // [C, T, 2]
	m := e.MLPNorm.forward(g, e.Norm2.forward(g, h))
	h = g.Add(h, e.W2.forward(g, g.Mul(geluTanh(g, e.W0.forward(g, m)), e.W1.forward(g, m))))
	tp.Mark("pre_block", h)
	z := e.Mean.forward(g, h)
	tp.Mark("mean_proj", z)
	return z
}

// attention is CausalAttention on x [D, T, 2]: QKV (flat [q | k | v]; q and v
// biased, k not), causal SDPA, the mean over heads, then an average pool of
// the head dim down to C and a C→C projection. The result is [C, T, 2].
func (e *audioEncoder) attention(g *ggml.Graph, x *ggml.Tensor, kv ggml.Storage) *ggml.Tensor {
	t, b := x.Ne(1), x.Ne(2)
	hd := e.dim / e.heads
	qkv := g.MulMat(e.QKV, x) // [3D, T, 2]
	part := func(i int) *ggml.Tensor {
		return g.View(qkv, i*e.dim*4, []int{hd, e.heads, t, b}, []int{hd * 4, qkv.Nb(1), qkv.Nb(2)})
	}
	perm := func(v *ggml.Tensor) *ggml.Tensor { return g.Permute(v, 0, 2, 1, 3) } // [hd, T, H, 2]
	q := perm(g.Add(part(0), e.QBias))
	k := perm(g.Cont(part(1)))
	v := perm(g.Add(part(2), e.VBias))
	scale := float32(1 / math.Sqrt(float64(hd)))
	a := g.Attention(q, k, v, ggml.AttentionOptions{Causal: true, Scale: scale, KV: kv, Name: "vae.audio.attn"}) // [hd, H, T, 2]
	a = g.Mean(g.Cont(g.Permute(a, 1, 0, 2, 3)))                                                                 // [1, hd, T, 2]: mean over heads
	pool := hd / e.channels
	a = g.Mean(g.Reshape(a, pool, e.channels, t, b)) // [1, C, T, 2]
	return e.AttnProj.forward(g, g.Reshape(a, e.channels, t, b))
}

// geluTanh is GELU's tanh form, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))),
// composed from exact ops: ggml's CPU GELU reads an f16 table (about 1e-3
// relative error), which the parity tolerance cannot absorb.
func geluTanh(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	one := g.Input("one", ggml.F32, 1)
	one.SetF32([]float32{1})
	inner := g.Scale(g.Add(x, g.Scale(g.Mul(g.Sqr(x), x), 0.044715)), float32(math.Sqrt(2/math.Pi)))
	return g.Mul(g.Scale(x, 0.5), g.Add(g.Tanh(inner), one))
}
