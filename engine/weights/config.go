package weights

import "math"

// DiTConfig is transformer/config.json of the release (MiniMaxH3DiTModel).
type DiTConfig struct {
	ClassName             string  `json:"_class_name"`
	HiddenSize            int64   `json:"hidden_size"`
	NumLayers             int64   `json:"num_layers"`
	TokenRefinerNumLayers int64   `json:"token_refiner_num_layers"`
	NumAttentionHeads     int64   `json:"num_attention_heads"`
	AttentionHeadDim      int64   `json:"attention_head_dim"`
	FFNHiddenSize         int64   `json:"ffn_hidden_size"`
	LatentsDim            int64   `json:"latents_dim"`
	AudioLatentsDim       int64   `json:"audio_latents_dim"`
	PatchSize             []int64 `json:"patch_size"`
	TextDim               int64   `json:"text_dim"`
	TimestepInputDim      int64   `json:"timestep_input_dim"`
	TimeEmbedHiddenSize   int64   `json:"time_embed_hidden_size"`
	TimeEmbedDim          int64   `json:"time_embed_dim"`
	RopeInvFreqLen        int64   `json:"rope_inv_freq_len"`
	NormEps               float64 `json:"norm_eps"`
	QKNormEps             float64 `json:"qk_norm_eps"`
	FinalNormEps          float64 `json:"final_norm_eps"`
	AdaLNOutFeatures      int64   `json:"adaln_out_features"`
	FinalAdaLNOutFeatures int64   `json:"final_adaln_out_features"`
}

// QwenConfig is text_encoder/config.json (Hugging Face Qwen3-VL).
type QwenConfig struct {
	Architectures      []string         `json:"architectures"`
	ModelType          string           `json:"model_type"`
	ImageTokenID       int64            `json:"image_token_id"`
	VideoTokenID       int64            `json:"video_token_id"`
	VisionStartTokenID int64            `json:"vision_start_token_id"`
	VisionEndTokenID   int64            `json:"vision_end_token_id"`
	TieWordEmbeddings  bool             `json:"tie_word_embeddings"`
	TextConfig         QwenTextConfig   `json:"text_config"`
	VisionConfig       QwenVisionConfig `json:"vision_config"`
}

// QwenTextConfig is the language model block of QwenConfig.
type QwenTextConfig struct {
	ModelType             string          `json:"model_type"`
	VocabSize             int64           `json:"vocab_size"`
	HiddenSize            int64           `json:"hidden_size"`
	IntermediateSize      int64           `json:"intermediate_size"`
	NumHiddenLayers       int64           `json:"num_hidden_layers"`
	NumAttentionHeads     int64           `json:"num_attention_heads"`
	NumKeyValueHeads      int64           `json:"num_key_value_heads"`
	HeadDim               int64           `json:"head_dim"`
	HiddenAct             string          `json:"hidden_act"`
	MaxPositionEmbeddings int64           `json:"max_position_embeddings"`
	RMSNormEps            float64         `json:"rms_norm_eps"`
	RopeTheta             float64         `json:"rope_theta"`
	RopeScaling           QwenRopeScaling `json:"rope_scaling"`
	AttentionBias         bool            `json:"attention_bias"`
	AttentionDropout      float64         `json:"attention_dropout"`
	BOSTokenID            int64           `json:"bos_token_id"`
	EOSTokenID            int64           `json:"eos_token_id"`
	DType                 string          `json:"dtype"`
	TieWordEmbeddings     bool            `json:"tie_word_embeddings"`
	UseCache              bool            `json:"use_cache"`
	InitializerRange      float64         `json:"initializer_range"`
}

// QwenRopeScaling is the mRoPE description of the released config
// (transformers 4.57 spelling; transformers 5 also accepts it).
type QwenRopeScaling struct {
	RopeType         string  `json:"rope_type"`
	MropeSection     []int64 `json:"mrope_section"`
	MropeInterleaved bool    `json:"mrope_interleaved"`
}

// QwenVisionConfig is the vision tower block of QwenConfig.
type QwenVisionConfig struct {
	ModelType              string  `json:"model_type"`
	Depth                  int64   `json:"depth"`
	HiddenSize             int64   `json:"hidden_size"`
	HiddenAct              string  `json:"hidden_act"`
	IntermediateSize       int64   `json:"intermediate_size"`
	NumHeads               int64   `json:"num_heads"`
	InChannels             int64   `json:"in_channels"`
	PatchSize              int64   `json:"patch_size"`
	SpatialMergeSize       int64   `json:"spatial_merge_size"`
	TemporalPatchSize      int64   `json:"temporal_patch_size"`
	OutHiddenSize          int64   `json:"out_hidden_size"`
	NumPositionEmbeddings  int64   `json:"num_position_embeddings"`
	DeepstackVisualIndexes []int64 `json:"deepstack_visual_indexes"`
	InitializerRange       float64 `json:"initializer_range"`
}

// VideoVAEConfig is video_vae/config.json: the wrapper that holds the clip
// geometry and the latent whitening, pointing at source/.
type VideoVAEConfig struct {
	ClassName         string    `json:"_class_name"`
	SourcePath        string    `json:"source_path"`
	LatentChannels    int64     `json:"latent_channels"`
	VAEClipLength     int64     `json:"vae_clip_length"`
	VAETokenDrop      int64     `json:"vae_token_drop"`
	VAETileSize       int64     `json:"vae_tile_size"`
	VAETileOverlapMin int64     `json:"vae_tile_overlap_min"`
	LatentsMean       []float64 `json:"latents_mean"`
	LatentsStd        []float64 `json:"latents_std"`
}

// VideoVAESourceConfig is video_vae/source/config.json (the network).
type VideoVAESourceConfig struct {
	InChannels     int64            `json:"in_channels"`
	OutCh          int64            `json:"out_ch"`
	Ch             int64            `json:"ch"`
	ChMult         []int64          `json:"ch_mult"`
	NumResBlocks   int64            `json:"num_res_blocks"`
	SpaceDown      []int64          `json:"space_down"`
	TimeDown       []int64          `json:"time_down"`
	ZChannels      int64            `json:"z_channels"`
	EmbedDim       int64            `json:"embed_dim"`
	VAERatio       int64            `json:"vae_ratio"`
	VAERatioT      int64            `json:"vae_ratio_t"`
	PaddingMode    string           `json:"padding_mode"`
	UseTIsolatedGN bool             `json:"use_t_isolated_gn"`
	CausalEncoder  bool             `json:"causal_encoder"`
	Use3DConv      bool             `json:"use_3d_conv"`
	UseViTDecoder  bool             `json:"use_vit_decoder"`
	PixelNormType  string           `json:"pixel_norm_type"`
	ScalingFactor  float64          `json:"scaling_factor"`
	ShiftFactor    float64          `json:"shift_factor"`
	ViTDecoder     ViTDecoderConfig `json:"vit_decoder_kwargs"`
}

// ViTDecoderConfig is the ViT3D decoder block of VideoVAESourceConfig.
type ViTDecoderConfig struct {
	NumLayers       int64   `json:"num_layers"`
	Heads           int64   `json:"heads"`
	DimHead         int64   `json:"dim_head"`
	RopeTheta       float64 `json:"rope_theta"`
	RopeDimRatio    float64 `json:"rope_dim_ratio"`
	NormType        string  `json:"norm_type"`
	QKNormType      string  `json:"qk_norm_type"`
	QKNormAffine    bool    `json:"qk_norm_affine"`
	FFNUseGated     bool    `json:"ffn_use_gated"`
	FFNActivationFn string  `json:"ffn_activation_fn"`
}

// vitRegisterTokens is fixed by the release (no config key states it).
const vitRegisterTokens = 4

// AudioVAEConfig is audio_vae/config.json.
type AudioVAEConfig struct {
	ClassName      string    `json:"_class_name"`
	LatentChannels int64     `json:"latent_channels"`
	OutputChannel  int64     `json:"output_channel"`
	SampleRate     int64     `json:"sample_rate"`
	LatentsMean    []float64 `json:"latents_mean"`
	LatentsStd     []float64 `json:"latents_std"`
}

// AudioVAEKwargs is metadata.json's metadata.kwargs: the network shape.
// num_attention_heads and decoder_kernel_sizes are not in the release's
// metadata (which fixes them at 8 and 9,9,4,4,4,4,4); other ports read
// these keys, and the tiny model needs them. The fields without a JSON key
// are release constants no config states.
type AudioVAEKwargs struct {
	SampleRate         int64   `json:"sample_rate"`
	VAELatentChannels  int64   `json:"vae_latent_channels"`
	LatentDim          int64   `json:"latent_dim"`
	DecoderDim         int64   `json:"decoder_dim"`
	DecoderRates       []int64 `json:"decoder_rates"`
	DecoderType        string  `json:"decoder_type"`
	DecoderKernelSizes []int64 `json:"decoder_kernel_sizes"`
	EncoderDim         int64   `json:"encoder_dim"`
	EncoderRates       []int64 `json:"encoder_rates"`
	AttnProj           bool    `json:"attn_proj"`
	NumAttentionHeads  int64   `json:"num_attention_heads"`

	ResblockKernelSizes   []int64   `json:"-"`
	ResblockDilationSizes [][]int64 `json:"-"`
	EncoderDilations      []int64   `json:"-"`
}

// ropeInvFreq is the DiT's shared per-axis frequency table,
// theta^(-i/n) with theta 10000 (the release stores it as rope.inv_freq).
func ropeInvFreq(i, n int) float64 { return math.Pow(10000, -float64(i)/float64(n)) }
