package dit

// ReleaseConfigJSON is MiniMaxAI/MiniMax-H3 transformer/config.json (shared
// H3 facts §1): the shapes release-size synthetic benchmarks and long tests
// build without the checkpoint.
const ReleaseConfigJSON = `{"_class_name": "MiniMaxH3DiTModel", "hidden_size": 5376, "num_layers": 50,
 "token_refiner_num_layers": 2, "num_attention_heads": 56, "attention_head_dim": 128,
 "ffn_hidden_size": 14336, "latents_dim": 24, "audio_latents_dim": 32, "patch_size": [1, 2, 2],
 "text_dim": 5120, "timestep_input_dim": 256, "time_embed_hidden_size": 5376, "time_embed_dim": 2688,
 "rope_inv_freq_len": 16, "norm_eps": 1e-5, "qk_norm_eps": 1e-5, "final_norm_eps": 1e-5,
 "adaln_out_features": 96768, "final_adaln_out_features": 10752}`

// ReleaseConfig is ReleaseConfigJSON parsed.
func ReleaseConfig() (*Config, error) { return ParseConfig([]byte(ReleaseConfigJSON)) }
