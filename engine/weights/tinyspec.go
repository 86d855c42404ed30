package weights

import "fmt"

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
func ditSpecs(c DiTConfig) specList {
	var l specList
	inner := c.NumAttentionHeads * c.AttentionHeadDim
	patch := c.LatentsDim * c.PatchSize[0] * c.PatchSize[1] * c.PatchSize[2]
	l.linear("video_patch_proj", F32, c.HiddenSize, patch, true)
	l.linear("audio_patch_proj", F32, c.HiddenSize, c.AudioLatentsDim, true)
	l.linear("condition_proj", BF16, c.HiddenSize, c.TextDim, true)
	l.linear("time_embedder.proj_in", F32, c.TimeEmbedHiddenSize, c.TimestepInputDim, true)
	l.linear("time_embedder.proj_out", F32, c.TimeEmbedDim, c.TimeEmbedHiddenSize, true)
	inv := make([]float32, c.RopeInvFreqLen)
	for i := range inv {
		inv[i] = float32(ropeInvFreq(i, int(c.RopeInvFreqLen)))
	}
	l = append(l, tensorSpec{name: "rope.inv_freq", dtype: F32, shape: []int64{c.RopeInvFreqLen}, init: initFixed, fixed: inv})
	block := func(p string, adaln bool) {
		l.add(p+"norm1.weight", BF16, initNorm, c.HiddenSize)
		l.add(p+"norm2.weight", BF16, initNorm, c.HiddenSize)
		l.linear(p+"attn.qkv_proj", BF16, 3*inner, c.HiddenSize, false)
		l.linear(p+"attn.out_proj", BF16, c.HiddenSize, inner, false)
		l.add(p+"attn.q_norm.weight", BF16, initNorm, c.AttentionHeadDim)
		l.add(p+"attn.k_norm.weight", BF16, initNorm, c.AttentionHeadDim)
		l.linear(p+"mlp.fc1", BF16, 2*c.FFNHiddenSize, c.HiddenSize, false)
		l.linear(p+"mlp.fc2", BF16, c.HiddenSize, c.FFNHiddenSize, false)
		if adaln {
			l.linear(p+"adaln_proj.linear", BF16, c.AdaLNOutFeatures, c.TimeEmbedDim, true)
		}
	}
	for i := int64(0); i < c.TokenRefinerNumLayers; i++ {
		block(fmt.Sprintf("token_refiner.blocks.%d.", i), false)
	}
	l.add("token_refiner.final_norm.weight", BF16, initNorm, c.HiddenSize)
	for i := int64(0); i < c.NumLayers; i++ {
		block(fmt.Sprintf("blocks.%d.", i), true)
	}
	l.add("final_layer.norm.weight", BF16, initNorm, c.HiddenSize)
	l.linear("final_layer.adaln_proj.linear", BF16, c.FinalAdaLNOutFeatures, c.TimeEmbedDim, true)
	l.linear("final_layer.video_out", F32, patch, c.HiddenSize, true)
	l.linear("final_layer.audio_out", F32, c.AudioLatentsDim, c.HiddenSize, true)
	return l
}

// textEncoderSpecs lists the Qwen3-VL tensors under Hugging Face's names
// (Qwen3VLForConditionalGeneration), all BF16 as in the release.
func textEncoderSpecs(c QwenConfig) specList {
	var l specList
	t, v := c.TextConfig, c.VisionConfig
	l.add("model.language_model.embed_tokens.weight", BF16, initWeight, t.VocabSize, t.HiddenSize)
	for i := int64(0); i < t.NumHiddenLayers; i++ {
		p := fmt.Sprintf("model.language_model.layers.%d.", i)
		l.add(p+"input_layernorm.weight", BF16, initNorm, t.HiddenSize)
		l.add(p+"post_attention_layernorm.weight", BF16, initNorm, t.HiddenSize)
		l.linear(p+"self_attn.q_proj", BF16, t.NumAttentionHeads*t.HeadDim, t.HiddenSize, false)
		l.linear(p+"self_attn.k_proj", BF16, t.NumKeyValueHeads*t.HeadDim, t.HiddenSize, false)
		l.linear(p+"self_attn.v_proj", BF16, t.NumKeyValueHeads*t.HeadDim, t.HiddenSize, false)
		l.linear(p+"self_attn.o_proj", BF16, t.HiddenSize, t.NumAttentionHeads*t.HeadDim, false)
		l.add(p+"self_attn.q_norm.weight", BF16, initNorm, t.HeadDim)
		l.add(p+"self_attn.k_norm.weight", BF16, initNorm, t.HeadDim)
		l.linear(p+"mlp.gate_proj", BF16, t.IntermediateSize, t.HiddenSize, false)
		l.linear(p+"mlp.up_proj", BF16, t.IntermediateSize, t.HiddenSize, false)
		l.linear(p+"mlp.down_proj", BF16, t.HiddenSize, t.IntermediateSize, false)
	}
	l.add("model.language_model.norm.weight", BF16, initNorm, t.HiddenSize)
	l.add("lm_head.weight", BF16, initWeight, t.VocabSize, t.HiddenSize)

	l.add("model.visual.patch_embed.proj.weight", BF16, initWeight, v.HiddenSize, v.InChannels, v.TemporalPatchSize, v.PatchSize, v.PatchSize)
	l.add("model.visual.patch_embed.proj.bias", BF16, initBias, v.HiddenSize)
	l.add("model.visual.pos_embed.weight", BF16, initWeight, v.NumPositionEmbeddings, v.HiddenSize)
	for i := int64(0); i < v.Depth; i++ {
		p := fmt.Sprintf("model.visual.blocks.%d.", i)
		l.add(p+"norm1.weight", BF16, initNorm, v.HiddenSize)
		l.add(p+"norm1.bias", BF16, initBias, v.HiddenSize)
		l.add(p+"norm2.weight", BF16, initNorm, v.HiddenSize)
		l.add(p+"norm2.bias", BF16, initBias, v.HiddenSize)
		l.linear(p+"attn.qkv", BF16, 3*v.HiddenSize, v.HiddenSize, true)
		l.linear(p+"attn.proj", BF16, v.HiddenSize, v.HiddenSize, true)
		l.linear(p+"mlp.linear_fc1", BF16, v.IntermediateSize, v.HiddenSize, true)
		l.linear(p+"mlp.linear_fc2", BF16, v.HiddenSize, v.IntermediateSize, true)
	}
	merged := v.HiddenSize * v.SpatialMergeSize * v.SpatialMergeSize
	merger := func(p string, normWidth int64) {
		l.add(p+"norm.weight", BF16, initNorm, normWidth)
		l.add(p+"norm.bias", BF16, initBias, normWidth)
		l.linear(p+"linear_fc1", BF16, merged, merged, true)
		l.linear(p+"linear_fc2", BF16, v.OutHiddenSize, merged, true)
	}
	// The main merger normalises each patch before the 2x2 shuffle; the
	// deepstack mergers normalise the shuffled 4*hidden vector.
	merger("model.visual.merger.", v.HiddenSize)
	for i := range v.DeepstackVisualIndexes {
		merger(fmt.Sprintf("model.visual.deepstack_merger_list.%d.", i), merged)
	}
	return l
}

// videoVAESpecs lists video_vae/source/model.safetensors (F32): the causal
// 3-D CNN encoder and the ViT3D decoder.
func videoVAESpecs(c VideoVAESourceConfig) specList {
	var l specList
	conv := func(p string, out, in, k int64) {
		l.add(p+".weight", F32, initWeight, out, in, k, k, k)
		l.add(p+".bias", F32, initBias, out)
	}
	norm := func(p string, ch int64) {
		l.add(p+".weight", F32, initNorm, ch)
		l.add(p+".bias", F32, initBias, ch)
	}
	conv("encoder.conv_in", c.Ch*c.ChMult[0], c.InChannels, 3)
	prev := c.Ch * c.ChMult[0]
	for lvl, m := range c.ChMult {
		ch := c.Ch * m
		for b := int64(0); b < c.NumResBlocks; b++ {
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
	conv("encoder.conv_out", 2*c.ZChannels, prev, 3)
	conv("quant_conv", 2*c.EmbedDim, 2*c.ZChannels, 1)
	conv("post_quant_conv", c.ZChannels, c.EmbedDim, 1)

	d := c.ViTDecoder
	dim := d.Heads * d.DimHead
	l.linear("decoder.x_embedder", F32, dim, c.ZChannels, true)
	l.add("decoder.register_tokens", F32, initBias, 1, vitRegisterTokens, dim)
	l.add("decoder.mask_token", F32, initBias, 1, 1, dim)
	for i := int64(0); i < d.NumLayers; i++ {
		p := fmt.Sprintf("decoder.transformer_blocks.%d.", i)
		l.add(p+"norm1.weight", F32, initNorm, dim)
		l.linear(p+"attn.to_qkv", F32, 3*dim, dim, true)
		l.linear(p+"attn.to_out", F32, dim, dim, true)
		l.add(p+"scale1", F32, initNorm, dim)
		l.add(p+"norm2.weight", F32, initNorm, dim)
		l.linear(p+"ff.w1", F32, 2*4*dim, dim, true)
		l.linear(p+"ff.w2", F32, dim, 4*dim, true)
		l.add(p+"scale2", F32, initNorm, dim)
	}
	l.add("decoder.norm_out.weight", F32, initNorm, dim)
	l.add("decoder.norm_out.bias", F32, initBias, dim)
	l.linear("decoder.proj_out", F32, c.OutCh*c.VAERatioT*c.VAERatio*c.VAERatio, dim, true)
	return l
}
