package textenc

import (
	"h3studio/engine/ggml"
)

// TextLayer is one Qwen3-VL decoder layer: pre-norm GQA attention with
// per-head Q/K RMSNorm and interleaved mRoPE, then a pre-norm SwiGLU MLP.
// ref: transformers modeling_qwen3_vl.py Qwen3VLTextDecoderLayer
type TextLayer struct {
	InputNorm *ggml.Tensor  `st:"input_layernorm.weight" shape:"hidden"`
	Attn      TextAttention `st:"self_attn"`
	PostNorm  *ggml.Tensor  `st:"post_attention_layernorm.weight" shape:"hidden"`
	MLP       TextMLP       `st:"mlp"`
}

// TextAttention holds the attention projections; none has a bias.
type TextAttention struct {
	Q     *ggml.Tensor `st:"q_proj.weight" shape:"q,hidden"`
	K     *ggml.Tensor `st:"k_proj.weight" shape:"kv,hidden"`
	V     *ggml.Tensor `st:"v_proj.weight" shape:"kv,hidden"`
	O     *ggml.Tensor `st:"o_proj.weight" shape:"hidden,q"`
	QNorm *ggml.Tensor `st:"q_norm.weight" shape:"head_dim"`
	KNorm *ggml.Tensor `st:"k_norm.weight" shape:"head_dim"`
}

// TextMLP is the SwiGLU feed-forward: down(silu(gate(x)) * up(x)).
type TextMLP struct {
	Gate *ggml.Tensor `st:"gate_proj.weight" shape:"inter,hidden"`
	Up   *ggml.Tensor `st:"up_proj.weight" shape:"inter,hidden"`
	Down *ggml.Tensor `st:"down_proj.weight" shape:"hidden,inter"`
}

// textDims resolves TextLayer's shape tags.
func textDims(c TextConfig) map[string]int64 {
	return map[string]int64{"hidden": int64(c.Hidden), "head_dim": int64(c.HeadDim), "q": int64(c.Heads * c.HeadDim),
		"kv": int64(c.KVHeads * c.HeadDim), "inter": int64(c.Intermediate)}
}

func norm(g *ggml.Graph, x, w *ggml.Tensor, eps float32) *ggml.Tensor {
	return g.Mul(g.RMSNorm(x, eps), w)
}

// textRoPE is the text model's interleaved mRoPE.
func textRoPE(c TextConfig) ggml.RoPEOptions {
	s := c.RoPE.Section
	return ggml.RoPEOptions{Mode: ggml.RoPEIMRoPE, Dims: c.HeadDim, Base: float32(c.RoPETheta), Sections: [4]int{s[0], s[1], s[2], 0}}
}

// KeysValues returns the rotated keys and the values of rows x [D, n] at
// mRoPE positions pos [4n], each [hd, KVHeads, n] f32.
func (l *TextLayer) KeysValues(g *ggml.Graph, x, pos *ggml.Tensor, c TextConfig) (k, v *ggml.Tensor) {
	n := x.Ne(1)
	h := norm(g, x, l.InputNorm, float32(c.Eps))
	k = g.Reshape(g.MulMat(l.Attn.K, h), c.HeadDim, c.KVHeads, n)
	k = g.RoPE(norm(g, k, l.Attn.KNorm, float32(c.Eps)), pos, textRoPE(c))
	v = g.Reshape(g.MulMat(l.Attn.V, h), c.HeadDim, c.KVHeads, n)
	return k, v
}

// Forward runs the layer for query rows x [D, n] at positions pos [4n];
// k, v [hd, KVHeads, e] are the rotated keys and values of rows 0..e-1, of
// which x's rows are the last n. It returns the layer output [D, n].
func (l *TextLayer) Forward(g *ggml.Graph, x, pos, k, v *ggml.Tensor, c TextConfig, chunk int, kv ggml.Storage, name string) *ggml.Tensor {
	n := x.Ne(1)
	h := norm(g, x, l.InputNorm, float32(c.Eps))
	q := g.Reshape(g.MulMat(l.Attn.Q, h), c.HeadDim, c.Heads, n)
	q = g.RoPE(norm(g, q, l.Attn.QNorm, float32(c.Eps)), pos, textRoPE(c))
	q = g.Cont(g.Permute(q, 0, 2, 1, 3))                                      // [hd, n, H]
	k, v = g.Cont(g.Permute(k, 0, 2, 1, 3)), g.Cont(g.Permute(v, 0, 2, 1, 3)) // [hd, e, KV]
	a := g.Attention(q, k, v, ggml.AttentionOptions{Causal: true, Chunk: chunk, KV: kv, Name: name + ".attn"})
	x = g.Add(x, g.MulMat(l.Attn.O, g.Reshape(a, c.HeadDim*c.Heads, n)))
	h = norm(g, x, l.PostNorm, float32(c.Eps))
	m := g.MulMat(l.MLP.Down, g.SwiGLU(g.MulMat(l.MLP.Gate, h), g.MulMat(l.MLP.Up, h)))
	return g.Add(x, m).SetName("%s.out", name)
}
