package textenc

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
