package dit

import (
	"h3studio/engine/ggml"
)

// Core is the attention + SwiGLU part shared by the DiT blocks and the
// token refiner blocks (no biases anywhere in it).
// ref: comfy/ldm/minimax/model.py Attention, MLP, RefinerBlock
type Core struct {
	Norm1 *ggml.Tensor `st:"norm1.weight"`
	Norm2 *ggml.Tensor `st:"norm2.weight"`
	QKV   *ggml.Tensor `st:"attn.qkv_proj.weight"` // [hidden, 3·inner], layout per Options.QKV
	QNorm *ggml.Tensor `st:"attn.q_norm.weight"`
	KNorm *ggml.Tensor `st:"attn.k_norm.weight"`
	Out   *ggml.Tensor `st:"attn.out_proj.weight"` // [inner, hidden]
	FC1   *ggml.Tensor `st:"mlp.fc1.weight"`       // [hidden, 2·ffn]: gate rows, then value rows
	FC2   *ggml.Tensor `st:"mlp.fc2.weight"`       // [ffn, hidden]
}

// Top holds everything outside the blocks that a forward needs.
// ref: comfy/ldm/minimax/model.py MiniMaxH3Model.__init__, FinalLayer
type Top struct {
	VideoIn   *ggml.Tensor `st:"video_patch_proj.weight"`
	VideoInB  *ggml.Tensor `st:"video_patch_proj.bias"`
	AudioIn   *ggml.Tensor `st:"audio_patch_proj.weight"`
	AudioInB  *ggml.Tensor `st:"audio_patch_proj.bias"`
	FinalNorm *ggml.Tensor `st:"final_layer.norm.weight"`
	VideoOut  *ggml.Tensor `st:"final_layer.video_out.weight"`
	VideoOutB *ggml.Tensor `st:"final_layer.video_out.bias"`
	AudioOut  *ggml.Tensor `st:"final_layer.audio_out.weight"`
	AudioOutB *ggml.Tensor `st:"final_layer.audio_out.bias"`
}

// TextPath is run once per generation.
type TextPath struct {
	Proj      *ggml.Tensor `st:"condition_proj.weight"`
	ProjB     *ggml.Tensor `st:"condition_proj.bias"`
	Refiner   []Core       `st:"token_refiner.blocks"`
	FinalNorm *ggml.Tensor `st:"token_refiner.final_norm.weight"`
}

// TimeEmbedder maps the 256-wide [cos | sin] sinusoid of t to the AdaLN input.
type TimeEmbedder struct {
	In   *ggml.Tensor `st:"time_embedder.proj_in.weight"`
	InB  *ggml.Tensor `st:"time_embedder.proj_in.bias"`
	Out  *ggml.Tensor `st:"time_embedder.proj_out.weight"`
	OutB *ggml.Tensor `st:"time_embedder.proj_out.bias"`
}

// AdaLN is one adaln_proj linear (a block's, or the final layer's).
type AdaLN struct {
	W *ggml.Tensor `st:"adaln_proj.linear.weight"`
	B *ggml.Tensor `st:"adaln_proj.linear.bias"`
}

// linear is x·Wᵀ (+ b): w [in, out], x [in, rows] -> [out, rows].
func linear(g *ggml.Graph, w, b, x *ggml.Tensor) *ggml.Tensor {
	y := g.MulMat(w, x)
	if b != nil {
		y = g.Add(y, b)
	}
	return y
}

// rmsNorm is RMSNorm over axis 0 times the gain.
func rmsNorm(g *ggml.Graph, x, w *ggml.Tensor, eps float64) *ggml.Tensor {
	return g.Mul(g.RMSNorm(x, float32(eps)), w)
}

// attnCtx is what a Core needs beyond its weights.
type attnCtx struct {
	cfg      *Config
	layout   qkvLayout
	cos, sin *ggml.Tensor // [rope_dims/2, 1, rows]; nil: no RoPE (the refiner)
	kv       ggml.Storage // K/V type (Options.Precision.KV); zero: the backend's
	side     coreSide     // LoRA side paths of the Core's linears (lora.go)
	name     string
}

// attention maps x [hidden, rows] to out_proj(SDPA(...)) [hidden, rows]:
// fused QKV, per-head RMSNorm on q and k, split-half RoPE on the first
// rope_dims of each head, full bidirectional attention with no mask.
func (c *Core) attention(g *ggml.Graph, x *ggml.Tensor, a attnCtx) *ggml.Tensor {
	cfg := a.cfg
	hd, heads, rows := cfg.HeadDim, cfg.Heads, x.Ne(1)
	qkv := a.side.qkv.add(g, g.MulMat(c.QKV, x), x) // [3·inner, rows]
	q, k, v := a.layout.split(g, qkv, hd, heads, rows)
	q = rmsNorm(g, q, c.QNorm, cfg.QKNormEps) // [hd, heads, rows]
	k = rmsNorm(g, k, c.KNorm, cfg.QKNormEps)
	if a.cos != nil {
		q = g.RoPETable(q, a.cos, a.sin)
		k = g.RoPETable(k, a.cos, a.sin)
	}
	q = g.Permute(q, 0, 2, 1, 3)         // [hd, rows, heads]
	k = g.Cont(g.Permute(k, 0, 2, 1, 3)) // contiguous per head: 7x faster on the CPU
	v = g.Cont(g.Permute(v, 0, 2, 1, 3))
	o := g.Reshape(g.Attention(q, k, v, ggml.AttentionOptions{KV: a.kv, Name: a.name}), hd*heads, rows)
	return a.side.out.add(g, g.MulMat(c.Out, o), o)
}

// mlp is fc2(silu(gate)·value), gate and value being the two halves of fc1.
func (c *Core) mlp(g *ggml.Graph, x *ggml.Tensor, a attnCtx) *ggml.Tensor {
	in, ffn := c.FC1.Ne(0), a.cfg.FFN
	half := []int{in, ffn}
	gate := g.MulMat(g.View(c.FC1, 0, half, nil), x)
	value := g.MulMat(g.View(c.FC1, ffn*c.FC1.Nb(1), half, nil), x)
	gate, value = a.side.fc1.addHalves(g, gate, value, x)
	h := g.SwiGLU(gate, value)
	return a.side.fc2.add(g, g.MulMat(c.FC2, h), h)
}

// refine is one token-refiner block: plain pre-norm residuals, no AdaLN, no RoPE.
// ref: comfy/ldm/minimax/model.py RefinerBlock.forward
func (c *Core) refine(g *ggml.Graph, x *ggml.Tensor, a attnCtx) *ggml.Tensor {
	x = g.Add(x, c.attention(g, rmsNorm(g, x, c.Norm1, a.cfg.NormEps), a))
	return g.Add(x, c.mlp(g, rmsNorm(g, x, c.Norm2, a.cfg.NormEps), a))
}

// Modulation is one block's per-row AdaLN terms, each [hidden, rows],
// gathered from the block's table by the rows' (timestep, modality) index.
// Scales are stored as 1 + scale.
type Modulation [adaSlots]*ggml.Tensor

// Forward updates x [hidden, rows]: modulated RMSNorm, attention, gated
// residual, then the same for the SwiGLU MLP.
// ref: comfy/ldm/minimax/model.py DiTBlock.forward
func (c *Core) Forward(g *ggml.Graph, x *ggml.Tensor, m Modulation, a attnCtx, tap func(string, *ggml.Tensor)) *ggml.Tensor {
	eps := a.cfg.NormEps
	h := g.Add(g.Mul(rmsNorm(g, x, c.Norm1, eps), m[ScaleMSA]), m[ShiftMSA])
	att := c.attention(g, h, a)
	tap(a.name, att)
	x = g.Add(x, g.Mul(att, m[GateMSA]))
	h = g.Add(g.Mul(rmsNorm(g, x, c.Norm2, eps), m[ScaleMLP]), m[ShiftMLP])
	return g.Add(x, g.Mul(c.mlp(g, h, a), m[GateMLP]))
}

// qkvLayout splits fused QKV rows as the checkpoint orders them.
type qkvLayout bool

const (
	qkvFlat        qkvLayout = false // [all q | all k | all v]: the Comfy-Org repack
	qkvInterleaved qkvLayout = true  // [h0 q,k,v][h1 q,k,v]...: the MiniMaxAI release
)

// split returns strided views q, k, v [hd, heads, rows] of qkv [3·inner, rows]:
// no copy either way, only the strides differ.
func (l qkvLayout) split(g *ggml.Graph, qkv *ggml.Tensor, hd, heads, rows int) (q, k, v *ggml.Tensor) {
	const f = 4
	shape := []int{hd, heads, rows}
	row := qkv.Nb(1)
	if l == qkvInterleaved {
		st := []int{3 * hd * f, row}
		return g.View(qkv, 0, shape, st), g.View(qkv, hd*f, shape, st), g.View(qkv, 2*hd*f, shape, st)
	}
	inner := hd * heads
	st := []int{hd * f, row}
	return g.View(qkv, 0, shape, st), g.View(qkv, inner*f, shape, st), g.View(qkv, 2*inner*f, shape, st)
}
