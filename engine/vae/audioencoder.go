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

// conv1d is a Conv1d's geometry; its weight is [Cout, Cin, K] in the
// checkpoint, ggml [K, Cin, Cout] in the graph.
type conv1d struct{ cin, cout, k, stride, pad, dilate int }

func (c conv1d) dims() map[string]int64 {
	return map[string]int64{"cin": int64(c.cin), "cout": int64(c.cout), "k": int64(c.k)}
}

// apply convolves x [L, Cin, B] with w and adds b (nil: no bias).
func (c conv1d) apply(g *ggml.Graph, x, w, b *ggml.Tensor) *ggml.Tensor {
	y := g.Conv1D(x, w, c.stride, c.pad, c.dilate)
	if b != nil {
		y = g.Add(y, b)
	}
	return y
}

// wnConv is a weight-normalised Conv1d with bias (weight_g, weight_v folded).
type wnConv struct {
	W *ggml.Tensor `st:"weight" shape:"cout,cin,k" ggml:"k,cin,cout" transform:"weightnorm"`
	B *ggml.Tensor `st:"bias" shape:"cout" ggml:"1,cout,1"`
	conv1d
}

func (c *wnConv) Dims() map[string]int64 { return c.dims() }

func (c *wnConv) forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor { return c.apply(g, x, c.W, c.B) }

// snake is Snake1d: x + sin²(αx)/(α + 1e-9), α per channel ([1, C, 1]).
type snake struct {
	Alpha *ggml.Tensor `st:"alpha" shape:"1,c,1" ggml:"1,c,1"`
	Inv   *ggml.Tensor `st:"alpha" shape:"1,c,1" ggml:"1,c,1" transform:"snake_inv"`
	c     int
}

func (s *snake) Dims() map[string]int64 { return map[string]int64{"c": int64(s.c)} }

func (s *snake) forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	return g.Snake(x, s.Alpha, s.Inv)
}

type residualUnit struct {
	Act1  snake  `st:"block.0"`
	Conv1 wnConv `st:"block.1"`
	Act2  snake  `st:"block.2"`
	Conv2 wnConv `st:"block.3"`
}

type encoderStage struct {
	Units [3]residualUnit `st:"block"`
	Act   snake           `st:"block.3"`
	Down  wnConv          `st:"block.4"`
}

type layerNorm struct {
	W *ggml.Tensor `st:"weight" shape:"c"`
	B *ggml.Tensor `st:"bias" shape:"c"`
	c int
}

func (n *layerNorm) Dims() map[string]int64 { return map[string]int64{"c": int64(n.c)} }

func (n *layerNorm) forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	return g.Add(g.Mul(g.LayerNorm(x, audioLayerNormEp), n.W), n.B)
}

type linear struct {
	W       *ggml.Tensor `st:"weight" shape:"out,in"`
	B       *ggml.Tensor `st:"bias" shape:"out"`
	in, out int
}

func (w *linear) Dims() map[string]int64 {
	return map[string]int64{"in": int64(w.in), "out": int64(w.out)}
}

func (w *linear) forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	return g.Add(g.MulMat(w.W, x), w.B)
}

// audioEncoder is Encoder + pre_block + mean_proj. encoder.block is
// PyTorch's Sequential: the input conv, one EncoderBlock per rate, a
// Snake and the output conv.
type audioEncoder struct {
	In     wnConv         `st:"encoder.block.0"`
	Stages []encoderStage `st:"encoder.block" first:"1"`
	Act    snake          `st:"encoder.block.{act}"`
	Out    wnConv         `st:"encoder.block.{out}"`

	Norm1    layerNorm    `st:"pre_block.norm1"`
	Norm2    layerNorm    `st:"pre_block.norm2"`
	Norm3    layerNorm    `st:"pre_block.norm3"`
	QKV      *ggml.Tensor `st:"pre_block.attn.qkv.weight" shape:"d3,d"` // no bias
	QBias    *ggml.Tensor `st:"pre_block.attn.q_bias" shape:"d" ggml:"hd,heads"`
	VBias    *ggml.Tensor `st:"pre_block.attn.v_bias" shape:"d" ggml:"hd,heads"`
	AttnProj linear       `st:"pre_block.attn.proj"`
	Proj     linear       `st:"pre_block.proj"`
	MLPNorm  layerNorm    `st:"pre_block.mlp.norm"`
	W0       linear       `st:"pre_block.mlp.w0"`
	W1       linear       `st:"pre_block.mlp.w1"`
	W2       linear       `st:"pre_block.mlp.w2"`
	MeanW    *ggml.Tensor `st:"mean_proj.weight" shape:"c,c,1"`
	MeanB    *ggml.Tensor `st:"mean_proj.bias" shape:"c"`

	heads, dim, channels int
}

func (e *audioEncoder) Dims() map[string]int64 {
	n := int64(len(e.Stages))
	return map[string]int64{"act": n + 1, "out": n + 2, "d": int64(e.dim), "d3": int64(3 * e.dim),
		"hd": int64(e.dim / e.heads), "heads": int64(e.heads), "c": int64(e.channels)}
}

// newAudioEncoder lays out the encoder c describes, weights not loaded.
func newAudioEncoder(c *AudioConfig) *audioEncoder {
	m := &c.Model
	D, C := m.LatentDim, c.LatentChannels
	e := &audioEncoder{heads: m.Heads, dim: D, channels: C}
	ch := m.EncoderDim
	e.In = wnConv{conv1d: conv1d{1, ch, 7, 1, 3, 1}}
	for _, stride := range m.EncoderRates {
		var st encoderStage
		for r, d := range audioEncDilations {
			st.Units[r] = residualUnit{Act1: snake{c: ch}, Conv1: wnConv{conv1d: conv1d{ch, ch, 7, 1, 3 * d, d}},
				Act2: snake{c: ch}, Conv2: wnConv{conv1d: conv1d{ch, ch, 1, 1, 0, 1}}}
		}
		st.Act = snake{c: ch}
		st.Down = wnConv{conv1d: conv1d{ch, 2 * ch, 2 * stride, stride, (stride + 1) / 2, 1}}
		e.Stages = append(e.Stages, st)
		ch *= 2
	}
	e.Act = snake{c: ch}
	e.Out = wnConv{conv1d: conv1d{ch, D, 3, 1, 1, 1}}
	e.Norm1, e.Norm2, e.Norm3, e.MLPNorm = layerNorm{c: D}, layerNorm{c: C}, layerNorm{c: D}, layerNorm{c: C}
	e.AttnProj, e.Proj = linear{in: C, out: C}, linear{in: D, out: C}
	e.W0, e.W1, e.W2 = linear{in: C, out: 2 * C}, linear{in: C, out: 2 * C}, linear{in: 2 * C, out: C}
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
	z := g.Add(g.MulMat(e.MeanW, h), e.MeanB)
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
