package weights

import (
	"fmt"
	"math"

	"h3studio/engine/arch"
)

// tensorSpec is one tensor of a generated snapshot.
type tensorSpec struct {
	name  string
	dtype DType
	shape []int64
	// init picks the value distribution: initWeight (N(0, 1/fan_in)),
	// initNorm (1 + N(0, 0.1)), initBias (N(0, 0.02)) or a fixed table.
	init  initKind
	fixed []float32
}

type initKind int

const (
	initWeight initKind = iota
	initNorm
	initBias
	initFixed
)

type specList []tensorSpec

func (l *specList) add(name string, dt DType, init initKind, shape ...int64) {
	*l = append(*l, tensorSpec{name: name, dtype: dt, shape: shape, init: init})
}

func (l *specList) linear(prefix string, dt DType, out, in int64, bias bool) {
	l.add(prefix+".weight", dt, initWeight, out, in)
	if bias {
		l.add(prefix+".bias", dt, initBias, out)
	}
}

// ditSpecs lists the MiniMax-H3 DiT tensors (535 at full size) with their
// release dtypes: BF16 plus the F32 islands (patch projections, time
// embedder, rope table, output heads).
func ditSpecs(c *arch.DiT) specList {
	var l specList
	h, inner, headDim, ffn := int64(c.Hidden), int64(c.Inner()), int64(c.HeadDim), int64(c.FFN)
	patch, audio, timeDim := int64(c.VideoPatchDim()), int64(c.AudioChannels), int64(c.TimeDim)
	l.linear("video_patch_proj", F32, h, patch, true)
	l.linear("audio_patch_proj", F32, h, audio, true)
	l.linear("condition_proj", BF16, h, int64(c.TextDim), true)
	l.linear("time_embedder.proj_in", F32, int64(c.TimeHidden), int64(c.TimestepDim), true)
	l.linear("time_embedder.proj_out", F32, timeDim, int64(c.TimeHidden), true)
	inv := make([]float32, c.RopeFreqs)
	for i := range inv {
		inv[i] = float32(ropeInvFreq(i, c.RopeFreqs))
	}
	l = append(l, tensorSpec{name: "rope.inv_freq", dtype: F32, shape: []int64{int64(c.RopeFreqs)}, init: initFixed, fixed: inv})
	block := func(p string, adaln bool) {
		l.add(p+"norm1.weight", BF16, initNorm, h)
		l.add(p+"norm2.weight", BF16, initNorm, h)
		l.linear(p+"attn.qkv_proj", BF16, 3*inner, h, false)
		l.linear(p+"attn.out_proj", BF16, h, inner, false)
		l.add(p+"attn.q_norm.weight", BF16, initNorm, headDim)
		l.add(p+"attn.k_norm.weight", BF16, initNorm, headDim)
		l.linear(p+"mlp.fc1", BF16, 2*ffn, h, false)
		l.linear(p+"mlp.fc2", BF16, h, ffn, false)
		if adaln {
			l.linear(p+"adaln_proj.linear", BF16, int64(c.AdaLNOut), timeDim, true)
		}
	}
	for i := 0; i < c.RefinerLayers; i++ {
		block(fmt.Sprintf("token_refiner.blocks.%d.", i), false)
	}
	l.add("token_refiner.final_norm.weight", BF16, initNorm, h)
	for i := 0; i < c.Layers; i++ {
		block(fmt.Sprintf("blocks.%d.", i), true)
	}
	l.add("final_layer.norm.weight", BF16, initNorm, h)
	l.linear("final_layer.adaln_proj.linear", BF16, int64(c.FinalAdaLNOut), timeDim, true)
	l.linear("final_layer.video_out", F32, patch, h, true)
	l.linear("final_layer.audio_out", F32, audio, h, true)
	return l
}

// ropeInvFreq is the DiT's shared per-axis frequency table,
// theta^(-i/n) with theta 10000 (the release stores it as rope.inv_freq).
func ropeInvFreq(i, n int) float64 { return math.Pow(10000, -float64(i)/float64(n)) }

// textEncoderSpecs lists the Qwen3-VL tensors under Hugging Face's names
// (Qwen3VLForConditionalGeneration), all BF16 as in the release.
func textEncoderSpecs(c *arch.Qwen) specList {
	var l specList
	t, v := c.Text, c.Vision
	D, hd, I, vocab := int64(t.Hidden), int64(t.HeadDim), int64(t.Intermediate), int64(t.Vocab)
	q, kv := int64(t.Heads)*hd, int64(t.KVHeads)*hd
	l.add("model.language_model.embed_tokens.weight", BF16, initWeight, vocab, D)
	for i := 0; i < t.Layers; i++ {
		p := fmt.Sprintf("model.language_model.layers.%d.", i)
		l.add(p+"input_layernorm.weight", BF16, initNorm, D)
		l.add(p+"post_attention_layernorm.weight", BF16, initNorm, D)
		l.linear(p+"self_attn.q_proj", BF16, q, D, false)
		l.linear(p+"self_attn.k_proj", BF16, kv, D, false)
		l.linear(p+"self_attn.v_proj", BF16, kv, D, false)
		l.linear(p+"self_attn.o_proj", BF16, D, q, false)
		l.add(p+"self_attn.q_norm.weight", BF16, initNorm, hd)
		l.add(p+"self_attn.k_norm.weight", BF16, initNorm, hd)
		l.linear(p+"mlp.gate_proj", BF16, I, D, false)
		l.linear(p+"mlp.up_proj", BF16, I, D, false)
		l.linear(p+"mlp.down_proj", BF16, D, I, false)
	}
	l.add("model.language_model.norm.weight", BF16, initNorm, D)
	l.add("lm_head.weight", BF16, initWeight, vocab, D)

	vh, vmlp, patch := int64(v.Hidden), int64(v.Intermediate), int64(v.Patch)
	l.add("model.visual.patch_embed.proj.weight", BF16, initWeight, vh, int64(v.InChannels), int64(v.TemporalPatch), patch, patch)
	l.add("model.visual.patch_embed.proj.bias", BF16, initBias, vh)
	l.add("model.visual.pos_embed.weight", BF16, initWeight, int64(v.NumPositions), vh)
	for i := 0; i < v.Depth; i++ {
		p := fmt.Sprintf("model.visual.blocks.%d.", i)
		l.add(p+"norm1.weight", BF16, initNorm, vh)
		l.add(p+"norm1.bias", BF16, initBias, vh)
		l.add(p+"norm2.weight", BF16, initNorm, vh)
		l.add(p+"norm2.bias", BF16, initBias, vh)
		l.linear(p+"attn.qkv", BF16, 3*vh, vh, true)
		l.linear(p+"attn.proj", BF16, vh, vh, true)
		l.linear(p+"mlp.linear_fc1", BF16, vmlp, vh, true)
		l.linear(p+"mlp.linear_fc2", BF16, vh, vmlp, true)
	}
	merged := vh * int64(v.MergeCell())
	merger := func(p string, normWidth int64) {
		l.add(p+"norm.weight", BF16, initNorm, normWidth)
		l.add(p+"norm.bias", BF16, initBias, normWidth)
		l.linear(p+"linear_fc1", BF16, merged, merged, true)
		l.linear(p+"linear_fc2", BF16, int64(v.OutHidden), merged, true)
	}
	// The main merger normalises each patch before the 2x2 shuffle; the
	// deepstack mergers normalise the shuffled 4*hidden vector.
	merger("model.visual.merger.", vh)
	for i := range v.Deepstack {
		merger(fmt.Sprintf("model.visual.deepstack_merger_list.%d.", i), merged)
	}
	return l
}

// videoVAESpecs lists video_vae/source/model.safetensors (F32): the causal
// 3-D CNN encoder and the ViT3D decoder.
func videoVAESpecs(cfg *arch.VideoVAE) specList {
	var l specList
	c := &cfg.Source
	conv := func(p string, out, in, k int64) {
		l.add(p+".weight", F32, initWeight, out, in, k, k, k)
		l.add(p+".bias", F32, initBias, out)
	}
	norm := func(p string, ch int64) {
		l.add(p+".weight", F32, initNorm, ch)
		l.add(p+".bias", F32, initBias, ch)
	}
	z, e := int64(c.ZChannels), int64(c.EmbedDim)
	conv("encoder.conv_in", int64(c.Ch*c.ChMult[0]), int64(c.InChannels), 3)
	prev := int64(c.Ch * c.ChMult[0])
	for lvl, m := range c.ChMult {
		ch := int64(c.Ch * m)
		for b := 0; b < c.NumResBlocks; b++ {
			in := ch
			if b == 0 {
				in = prev
			}
			p := fmt.Sprintf("encoder.down.%d.block.%d", lvl, b)
			norm(p+".norm1", in)
			conv(p+".conv1", ch, in, 3)
			norm(p+".norm2", ch)
			conv(p+".conv2", ch, ch, 3)
			if in != ch {
				conv(p+".nin_shortcut", ch, in, 1)
			}
		}
		if c.SpaceDown[lvl]*c.TimeDown[lvl] > 1 {
			conv(fmt.Sprintf("encoder.down.%d.downsample.conv", lvl), ch, ch, 3)
		}
		prev = ch
	}
	norm("encoder.norm_out", prev)
	conv("encoder.conv_out", 2*z, prev, 3)
	conv("quant_conv", 2*e, 2*z, 1)
	conv("post_quant_conv", z, e, 1)

	dim := int64(cfg.Dim())
	l.linear("decoder.x_embedder", F32, dim, z, true)
	l.add("decoder.register_tokens", F32, initBias, 1, arch.RegisterTokens, dim)
	l.add("decoder.mask_token", F32, initBias, 1, 1, dim)
	for i := 0; i < c.ViT.Layers; i++ {
		p := fmt.Sprintf("decoder.transformer_blocks.%d.", i)
		l.add(p+"norm1.weight", F32, initNorm, dim)
		l.linear(p+"attn.to_qkv", F32, 3*dim, dim, true)
		l.linear(p+"attn.to_out", F32, dim, dim, true)
		l.add(p+"scale1", F32, initNorm, dim)
		l.add(p+"norm2.weight", F32, initNorm, dim)
		l.linear(p+"ff.w1", F32, 2*arch.FFNMult*dim, dim, true)
		l.linear(p+"ff.w2", F32, dim, arch.FFNMult*dim, true)
		l.add(p+"scale2", F32, initNorm, dim)
	}
	l.add("decoder.norm_out.weight", F32, initNorm, dim)
	l.add("decoder.norm_out.bias", F32, initBias, dim)
	r := int64(cfg.SpatialRatio())
	l.linear("decoder.proj_out", F32, int64(c.OutChannels)*int64(cfg.TemporalRatio())*r*r, dim, true)
	return l
}
