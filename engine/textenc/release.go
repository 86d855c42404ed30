package textenc

// ReleaseConfigJSON is Qwen3-VL-32B's text encoder config as MiniMax-H3
// ships it: the shapes of release-size synthetic benchmarks and long tests.
const ReleaseConfigJSON = `{
  "image_token_id": 151655, "video_token_id": 151656,
  "vision_start_token_id": 151652, "vision_end_token_id": 151653,
  "text_config": {"vocab_size": 151936, "hidden_size": 5120, "intermediate_size": 25600,
    "num_hidden_layers": 64, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
    "hidden_act": "silu", "rms_norm_eps": 1e-06, "rope_theta": 5000000,
    "rope_scaling": {"mrope_interleaved": true, "mrope_section": [24, 20, 20], "rope_type": "default"}},
  "vision_config": {"depth": 27, "hidden_size": 1152, "hidden_act": "gelu_pytorch_tanh",
    "intermediate_size": 4304, "num_heads": 16, "in_channels": 3, "patch_size": 16,
    "spatial_merge_size": 2, "temporal_patch_size": 2, "out_hidden_size": 5120,
    "num_position_embeddings": 2304, "deepstack_visual_indexes": [8, 16, 24]}
}`

// textShapes is one language layer's weights in ggml order, by checkpoint
// name under the layer prefix.
func textShapes(c TextConfig) map[string][]int {
	D, hd, I := c.Hidden, c.HeadDim, c.Intermediate
	return map[string][]int{
		"input_layernorm.weight": {D}, "post_attention_layernorm.weight": {D},
		"self_attn.q_proj.weight": {D, c.Heads * hd}, "self_attn.k_proj.weight": {D, c.KVHeads * hd},
		"self_attn.v_proj.weight": {D, c.KVHeads * hd}, "self_attn.o_proj.weight": {c.Heads * hd, D},
		"self_attn.q_norm.weight": {hd}, "self_attn.k_norm.weight": {hd},
		"mlp.gate_proj.weight": {D, I}, "mlp.up_proj.weight": {D, I}, "mlp.down_proj.weight": {I, D},
	}
}
