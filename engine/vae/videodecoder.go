package vae

import (
	"fmt"
	"math"

	"h3studio/engine/ggml"
	"h3studio/engine/tap"
)

// Video decoder: post_quant_conv, then a ViT over latent voxels (ViT3DDecoder).
// Tokens are ggml [dim, S]: the T·H·W voxels in (t, h, w) order, then 4
// register tokens and one zero token. Each block: pre-RMSNorm, QKV with
// bias (rows grouped per head as [q | k | v]), non-affine RMSNorm on q and k,
// split-half RoPE over 3 axes, attention, output projection, residual
// scaled by scale1; then RMSNorm, gated-SiLU FFN, residual scaled by scale2.
// The head maps each voxel to a 4x16x16 RGB patch.
// ref: ComfyUI comfy/ldm/minimax/vae.py ViT3DDecoder, TransformerBlock.

// vitBlock is one TransformerBlock.
type vitBlock struct {
	Norm1  *ggml.Tensor `st:"norm1.weight" shape:"dim"`
	QKVW   *ggml.Tensor `st:"attn.to_qkv.weight" shape:"dim3,dim"`
	QKVB   *ggml.Tensor `st:"attn.to_qkv.bias" shape:"dim3"`
	OutW   *ggml.Tensor `st:"attn.to_out.weight" shape:"dim,dim"`
	OutB   *ggml.Tensor `st:"attn.to_out.bias" shape:"dim"`
	Scale1 *ggml.Tensor `st:"scale1" shape:"dim"`
	Norm2  *ggml.Tensor `st:"norm2.weight" shape:"dim"`
	W1W    *ggml.Tensor `st:"ff.w1.weight" shape:"inner2,dim"`
	W1B    *ggml.Tensor `st:"ff.w1.bias" shape:"inner2"`
	W2W    *ggml.Tensor `st:"ff.w2.weight" shape:"dim,inner"`
	W2B    *ggml.Tensor `st:"ff.w2.bias" shape:"dim"`
	Scale2 *ggml.Tensor `st:"scale2" shape:"dim"`
}

// videoDecoder is post_quant_conv plus ViT3DDecoder.
type videoDecoder struct {
	PostW     *ggml.Tensor `st:"post_quant_conv.weight" shape:"z,e,1,1,1"`
	PostB     *ggml.Tensor `st:"post_quant_conv.bias" shape:"z"`
	EmbedW    *ggml.Tensor `st:"decoder.x_embedder.weight" shape:"dim,z"`
	EmbedB    *ggml.Tensor `st:"decoder.x_embedder.bias" shape:"dim"`
	Registers *ggml.Tensor `st:"decoder.register_tokens" shape:"1,registers,dim" ggml:"dim,registers"`
	Blocks    []vitBlock   `st:"decoder.transformer_blocks"`
	NormW     *ggml.Tensor `st:"decoder.norm_out.weight" shape:"dim"`
	NormB     *ggml.Tensor `st:"decoder.norm_out.bias" shape:"dim"`
	ProjW     *ggml.Tensor `st:"decoder.proj_out.weight" shape:"patch_out,dim"`
	ProjB     *ggml.Tensor `st:"decoder.proj_out.bias" shape:"patch_out"`

	heads, dimHead, dim, pairs int
	z, e                       int
	invFreq                    []float64
	patch, patchT, outCh       int
}

// newVideoDecoder lays out the decoder c describes, weights not loaded.
func newVideoDecoder(c *VideoConfig) *videoDecoder {
	v := c.Source.ViT
	d := &videoDecoder{heads: v.Heads, dimHead: v.DimHead, dim: c.Dim(), pairs: c.RopePairs(),
		z: c.Source.ZChannels, e: c.Source.EmbedDim,
		patch: c.SpatialRatio(), patchT: c.TemporalRatio(), outCh: c.Source.OutChannels,
		Blocks: make([]vitBlock, v.Layers)}
	// inv_freq = 1/theta^(k·6/rot) for k < rot/6, rot = int(dim_head·ratio)
	rot := 2 * d.pairs
	for k := range d.pairs / 3 {
		d.invFreq = append(d.invFreq, 1/math.Pow(v.RopeTheta, float64(6*k)/float64(rot)))
	}
	return d
}

func (d *videoDecoder) Dims() map[string]int64 {
	inner := ffnMult * d.dim
	return map[string]int64{"dim": int64(d.dim), "dim3": int64(3 * d.dim), "inner": int64(inner), "inner2": int64(2 * inner),
		"z": int64(d.z), "e": int64(d.e), "registers": registerTokens, "patch_out": int64(d.outCh * d.patchT * d.patch * d.patch)}
}

// ropeTables returns cos and sin [pairs, S] for a t x h x w voxel grid plus
// the suffix tokens (position 0: no rotation). Pair p rotates axis p/F with
// frequency p%F, angle 2π·coord·inv_freq, coord the cell centre in (-1, 1).
func (d *videoDecoder) ropeTables(t, h, w int) (cos, sin []float32) {
	n := t * h * w
	s := n + decoderSuffix
	f := len(d.invFreq)
	cos = make([]float32, d.pairs*s)
	sin = make([]float32, d.pairs*s)
	centre := func(i, n int) float64 { return 2*(float64(i)+0.5)/float64(n) - 1 }
	for tok := range s {
		var c [3]float64
		if tok < n {
			c = [3]float64{centre(tok/(h*w), t), centre(tok/w%h, h), centre(tok%w, w)}
		}
		for p := range d.pairs {
			// the reference rounds coordinates and angles through float32
			a := float64(float32(float32(2*math.Pi*c[p/f]) * float32(d.invFreq[p%f])))
			cos[tok*d.pairs+p] = float32(math.Cos(a))
			sin[tok*d.pairs+p] = float32(math.Sin(a))
		}
	}
	return cos, sin
}

// Forward decodes latents z [C, N] (N = t·h·w voxels in (t, h, w) order,
// already de-normalised) to patches [3·4·16·16, N]. cos and sin are
// ropeTables inputs [pairs, 1, S].
func (d *videoDecoder) Forward(g *ggml.Graph, z, cos, sin *ggml.Tensor, kv ggml.Storage, tp *tap.Graph) *ggml.Tensor {
	n := z.Ne(1)
	x := g.Add(g.MulMat(d.PostW, z), d.PostB)
	tp.Mark("post_quant", x)
	x = g.Add(g.MulMat(d.EmbedW, x), d.EmbedB)
	tp.Mark("dec.x_embed", x)
	zero := g.Zeros(ggml.F32, d.dim, 1)
	x = g.Concat(g.Concat(x, d.Registers, 1), zero, 1) // [dim, S]
	for i := range d.Blocks {
		x = d.block(g, &d.Blocks[i], x, cos, sin, kv)
		tp.Mark(fmt.Sprintf("dec.block.%d", i), x)
	}
	x = g.Add(g.Mul(g.LayerNorm(x, vitEps), d.NormW), d.NormB)
	tp.Mark("dec.norm_out", x)
	x = g.View(x, 0, []int{d.dim, n}, nil)
	return g.Add(g.MulMat(d.ProjW, x), d.ProjB)
}

// block is TransformerBlock.forward on x [dim, S].
func (d *videoDecoder) block(g *ggml.Graph, b *vitBlock, x, cos, sin *ggml.Tensor, kv ggml.Storage) *ggml.Tensor {
	s := x.Ne(1)
	h := g.Mul(g.RMSNorm(x, vitEps), b.Norm1)
	qkv := g.Add(g.MulMat(b.QKVW, h), b.QKVB) // [3·dim, S], per head [q | k | v]
	head := func(part int) *ggml.Tensor {
		return g.View(qkv, part*d.dimHead*4, []int{d.dimHead, d.heads, s}, []int{3 * d.dimHead * 4, qkv.Nb(1)})
	}
	q := g.RoPETable(g.RMSNorm(head(0), vitEps), cos, sin)
	k := g.RoPETable(g.RMSNorm(head(1), vitEps), cos, sin)
	v := head(2)
	a := d.attend(g, q, k, v, kv) // [dimHead, heads, S]
	o := g.Add(g.MulMat(b.OutW, g.Reshape(a, d.dim, s)), b.OutB)
	x = g.Add(x, g.Mul(o, b.Scale1))

	h = g.Mul(g.RMSNorm(x, vitEps), b.Norm2)
	f := g.Add(g.MulMat(b.W1W, h), b.W1B) // [2·inner, S]: gate, then value
	inner := f.Ne(0) / 2
	gate := g.Cont(g.View(f, 0, []int{inner, s}, []int{f.Nb(1)}))
	up := g.View(f, inner*4, []int{inner, s}, []int{f.Nb(1)})
	f = g.Add(g.MulMat(b.W2W, g.Mul(g.SiLU(gate), up)), b.W2B)
	return g.Add(x, g.Mul(f, b.Scale2))
}

// attend is full (non-causal) attention of q, k, v [dimHead, heads, S] with
// K/V kept as kv; the result is [dimHead, heads, S].
func (d *videoDecoder) attend(g *ggml.Graph, q, k, v *ggml.Tensor, kv ggml.Storage) *ggml.Tensor {
	perm := func(t *ggml.Tensor) *ggml.Tensor { return g.Permute(t, 0, 2, 1, 3) } // [D, S, H]
	scale := float32(1 / math.Sqrt(float64(d.dimHead)))
	return g.Attention(perm(q), perm(k), perm(g.Cont(v)), ggml.AttentionOptions{Scale: scale, KV: kv, Name: "vae.attn"})
}
