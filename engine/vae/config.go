package vae

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// VideoConfig is the video VAE's configuration: the wrapper
// (video_vae/config.json: latent statistics, clip and tile recipe) merged
// with the architecture (video_vae/source/config.json).
type VideoConfig struct {
	// Wrapper keys.
	LatentChannels int       `json:"latent_channels"`
	ClipLength     int       `json:"vae_clip_length"`
	TokenDrop      int       `json:"vae_token_drop"`
	TileSize       int       `json:"vae_tile_size"`
	TileOverlapMin int       `json:"vae_tile_overlap_min"`
	LatentsMean    []float64 `json:"latents_mean"`
	LatentsStd     []float64 `json:"latents_std"`

	Source VideoSource `json:"-"`
}

// VideoSource is video_vae/source/config.json (AutoencoderKLLegacy).
type VideoSource struct {
	ClassName     string     `json:"_class_name"`
	InChannels    int        `json:"in_channels"`
	OutChannels   int        `json:"out_ch"`
	Ch            int        `json:"ch"`
	ChMult        []int      `json:"ch_mult"`
	NumResBlocks  int        `json:"num_res_blocks"`
	SpaceDown     []int      `json:"space_down"`
	TimeDown      []int      `json:"time_down"`
	ZChannels     int        `json:"z_channels"`
	EmbedDim      int        `json:"embed_dim"`
	PaddingMode   string     `json:"padding_mode"`
	PixelNormType string     `json:"pixel_norm_type"`
	CausalEncoder bool       `json:"causal_encoder"`
	TIsolatedGN   bool       `json:"use_t_isolated_gn"`
	UseVitDecoder bool       `json:"use_vit_decoder"`
	Use3DConv     bool       `json:"use_3d_conv"`
	ScalingFactor float64    `json:"scaling_factor"`
	ShiftFactor   float64    `json:"shift_factor"`
	ViT           ViTDecoder `json:"vit_decoder_kwargs"`
}

// ViTDecoder is source/config.json's vit_decoder_kwargs.
type ViTDecoder struct {
	DimHead      int     `json:"dim_head"`
	Heads        int     `json:"heads"`
	Layers       int     `json:"num_layers"`
	RopeDimRatio float64 `json:"rope_dim_ratio"`
	RopeTheta    float64 `json:"rope_theta"`
	NormType     string  `json:"norm_type"`
	QKNormType   string  `json:"qk_norm_type"`
	QKNormAffine bool    `json:"qk_norm_affine"`
	FFNGated     bool    `json:"ffn_use_gated"`
	FFNAct       string  `json:"ffn_activation_fn"`
}

// Fixed parts of the architecture that no config key states; Validate and
// the weight loader check them against tensor shapes.
const (
	groupNormGroups  = 32
	groupNormEps     = 1e-6
	vitEps           = 1e-5
	registerTokens   = 4
	ffnMult          = 4
	decoderSuffix    = registerTokens + 1 // registers plus one zero token
	audioSnakeEps    = 1e-9
	audioLayerNormEp = 1e-5
	audioFilterTaps  = 12 // Kaiser-sinc taps of the anti-aliased activations
	audioResampling  = 2  // their up/down ratio
)

// ImageNet statistics the encoder normalises pixels with and the decoder
// reverts (pixel_norm_type "imagenet").
var (
	pixelMean = [3]float64{0.485, 0.456, 0.406}
	pixelStd  = [3]float64{0.229, 0.224, 0.225}
)

// SpatialRatio is the pixel size of one latent cell (16 in the release).
func (c *VideoConfig) SpatialRatio() int { return prod(c.Source.SpaceDown) }

// TemporalRatio is the frames per latent step inside a clip (4).
func (c *VideoConfig) TemporalRatio() int { return prod(c.Source.TimeDown) }

// Dim is the ViT decoder width (2048 in the release).
func (c *VideoConfig) Dim() int { return c.Source.ViT.Heads * c.Source.ViT.DimHead }

// RopePairs is the number of rotated pairs per head: 3 axes share
// int(dim_head·ratio)/6 frequencies each (8 of 32 pairs in the release).
func (c *VideoConfig) RopePairs() int {
	return 3 * (int(float64(c.Source.ViT.DimHead)*c.Source.ViT.RopeDimRatio) / 6)
}

func prod(v []int) int {
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

// ParseVideoConfig reads video_vae/config.json (wrapper) and
// video_vae/source/config.json (source) and validates them.
func ParseVideoConfig(wrapper, source []byte) (*VideoConfig, error) {
	c := &VideoConfig{}
	if err := json.Unmarshal(wrapper, c); err != nil {
		return nil, fmt.Errorf("vae: video_vae/config.json: %w", err)
	}
	if err := json.Unmarshal(source, &c.Source); err != nil {
		return nil, fmt.Errorf("vae: video_vae/source/config.json: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// ReadVideoConfig reads the two config files of a video_vae folder given the
// path of its source/config.json (what weights.Component.Config names).
func ReadVideoConfig(sourceConfig string) (*VideoConfig, error) {
	src, err := os.ReadFile(sourceConfig)
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	wrapperPath := filepath.Join(filepath.Dir(filepath.Dir(sourceConfig)), "config.json")
	wr, err := os.ReadFile(wrapperPath)
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	return ParseVideoConfig(wr, src)
}

// Validate reports every problem with the configuration at once.
func (c *VideoConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("vae: video config: "+format, args...))
	}
	s := &c.Source
	n := len(s.ChMult)
	if n == 0 || len(s.SpaceDown) != n || len(s.TimeDown) != n {
		bad("ch_mult, space_down and time_down need one entry per level, got %d, %d, %d", n, len(s.SpaceDown), len(s.TimeDown))
	}
	for i, m := range s.ChMult {
		if m <= 0 || s.Ch*m%groupNormGroups != 0 {
			bad("level %d has %d channels, not a positive multiple of the %d norm groups", i, s.Ch*m, groupNormGroups)
		}
	}
	for i := range min(len(s.SpaceDown), len(s.TimeDown)) {
		if s.SpaceDown[i] < 1 || s.SpaceDown[i] > 2 || s.TimeDown[i] < 1 || s.TimeDown[i] > 2 {
			bad("level %d downsamples by space %d, time %d; only 1 or 2 are supported", i, s.SpaceDown[i], s.TimeDown[i])
		}
	}
	if s.InChannels != 3 || s.OutChannels != 3 {
		bad("in_channels %d, out_ch %d, want RGB (3)", s.InChannels, s.OutChannels)
	}
	if s.NumResBlocks < 1 {
		bad("num_res_blocks %d < 1", s.NumResBlocks)
	}
	if s.ZChannels != c.LatentChannels || s.EmbedDim != c.LatentChannels {
		bad("z_channels %d and embed_dim %d must equal latent_channels %d", s.ZChannels, s.EmbedDim, c.LatentChannels)
	}
	if s.PaddingMode != "reflect" || !s.CausalEncoder || !s.TIsolatedGN || !s.Use3DConv || !s.UseVitDecoder || s.PixelNormType != "imagenet" {
		bad("only the release encoder (reflect padding, causal 3-D convs, per-frame group norm, ViT decoder, imagenet pixels) is implemented")
	}
	if s.ScalingFactor != 1 || s.ShiftFactor != 0 {
		bad("scaling_factor %g / shift_factor %g: only 1 / 0 are supported", s.ScalingFactor, s.ShiftFactor)
	}
	v := s.ViT
	if v.Heads < 1 || v.DimHead < 1 || v.Layers < 1 {
		bad("vit decoder heads %d, dim_head %d, num_layers %d must be positive", v.Heads, v.DimHead, v.Layers)
	}
	if r := int(float64(v.DimHead) * v.RopeDimRatio); r%6 != 0 || r > v.DimHead || v.RopeTheta <= 0 {
		bad("rope over %d of %d head dims (ratio %g, theta %g) is not 3 axes of whole pairs", r, v.DimHead, v.RopeDimRatio, v.RopeTheta)
	}
	if v.NormType != "rms_norm" || v.QKNormType != "rms_norm" || v.QKNormAffine || !v.FFNGated || v.FFNAct != "silu" {
		bad("only the release ViT (rms_norm, non-affine rms qk norm, gated silu FFN) is implemented")
	}
	if c.LatentChannels < 1 || len(c.LatentsMean) != c.LatentChannels || len(c.LatentsStd) != c.LatentChannels {
		bad("latents_mean (%d) and latents_std (%d) need latent_channels (%d) values", len(c.LatentsMean), len(c.LatentsStd), c.LatentChannels)
	}
	for i, sd := range c.LatentsStd {
		if !(sd > 0) {
			bad("latents_std[%d] = %g is not positive", i, sd)
		}
	}
	rt := c.TemporalRatio()
	if c.ClipLength < 1 || c.TokenDrop < 0 || c.TokenDrop >= (c.ClipLength+rt-1)/rt {
		bad("vae_clip_length %d, vae_token_drop %d: the drop must be smaller than a clip's %d tokens", c.ClipLength, c.TokenDrop, (c.ClipLength+rt-1)/max(rt, 1))
	}
	r := c.SpatialRatio()
	if r > 0 && (c.TileSize < r || c.TileSize%r != 0 || c.TileOverlapMin < 0 || c.TileOverlapMin%r != 0 || c.TileOverlapMin >= c.TileSize) {
		bad("vae_tile_size %d / vae_tile_overlap_min %d must be multiples of %d with the overlap below the tile", c.TileSize, c.TileOverlapMin, r)
	}
	return errors.Join(errs...)
}

// AudioConfig is the audio VAE's configuration: audio_vae/config.json
// (latent statistics) plus the model kwargs of audio_vae/metadata.json.
type AudioConfig struct {
	LatentChannels int       `json:"latent_channels"`
	SampleRate     int       `json:"sample_rate"`
	LatentsMean    []float64 `json:"latents_mean"`
	LatentsStd     []float64 `json:"latents_std"`

	Model AudioModel `json:"-"`
}

// AudioModel is metadata.json's metadata.kwargs.
type AudioModel struct {
	AttnProj       bool   `json:"attn_proj"`
	DecoderDim     int    `json:"decoder_dim"`
	DecoderRates   []int  `json:"decoder_rates"`
	DecoderType    string `json:"decoder_type"`
	EncoderDim     int    `json:"encoder_dim"`
	EncoderRates   []int  `json:"encoder_rates"`
	LatentDim      int    `json:"latent_dim"`
	SampleRate     int    `json:"sample_rate"`
	LatentChannels int    `json:"vae_latent_channels"`
	// Not in the release metadata, where they are fixed (8 heads; kernels
	// 9,9,4,4,4,4,4); other ports read these keys, and the tiny test model
	// sets them.
	Heads          int   `json:"num_attention_heads"`
	DecoderKernels []int `json:"decoder_kernel_sizes"`
}

// Release values of the audio architecture that the metadata leaves out.
var (
	releaseAudioHeads   = 8
	releaseAudioRates   = []int{5, 5, 2, 2, 2, 2, 2}
	releaseAudioKernels = []int{9, 9, 4, 4, 4, 4, 4}
	audioResKernels     = []int{3, 7, 11}
	audioResDilations   = []int{1, 3, 5}
	audioEncDilations   = []int{1, 3, 9}
)

// Hop is the samples per latent step (800 in the release).
func (c *AudioConfig) Hop() int { return prod(c.Model.EncoderRates) }

// ParseAudioConfig reads audio_vae/config.json and audio_vae/metadata.json.
func ParseAudioConfig(config, metadata []byte) (*AudioConfig, error) {
	c := &AudioConfig{}
	if err := json.Unmarshal(config, c); err != nil {
		return nil, fmt.Errorf("vae: audio_vae/config.json: %w", err)
	}
	var meta struct {
		Metadata struct {
			Kwargs AudioModel `json:"kwargs"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(metadata, &meta); err != nil {
		return nil, fmt.Errorf("vae: audio_vae/metadata.json: %w", err)
	}
	c.Model = meta.Metadata.Kwargs
	if c.Model.Heads == 0 {
		c.Model.Heads = releaseAudioHeads
	}
	if len(c.Model.DecoderKernels) == 0 && slices.Equal(c.Model.DecoderRates, releaseAudioRates) {
		c.Model.DecoderKernels = releaseAudioKernels
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return c, nil
}

// ReadAudioConfig reads config.json and metadata.json of an audio_vae folder
// given the path of its config.json.
func ReadAudioConfig(config string) (*AudioConfig, error) {
	cj, err := os.ReadFile(config)
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	meta, err := os.ReadFile(filepath.Join(filepath.Dir(config), "metadata.json"))
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	return ParseAudioConfig(cj, meta)
}

// Validate reports every problem with the configuration at once.
func (c *AudioConfig) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("vae: audio config: "+format, args...))
	}
	m := &c.Model
	if !m.AttnProj || m.DecoderType != "bigvgan" {
		bad("attn_proj %v, decoder_type %q: only the release model (attention projection, BigVGAN) is implemented", m.AttnProj, m.DecoderType)
	}
	if m.EncoderDim < 1 || len(m.EncoderRates) == 0 || m.LatentDim < 1 {
		bad("encoder_dim %d, encoder_rates %v, latent_dim %d must be positive", m.EncoderDim, m.EncoderRates, m.LatentDim)
	}
	if c.LatentChannels < 1 || m.LatentChannels != c.LatentChannels {
		bad("vae_latent_channels %d differs from latent_channels %d", m.LatentChannels, c.LatentChannels)
	}
	if m.Heads < 1 || m.LatentDim%m.Heads != 0 || c.LatentChannels < 1 || (m.LatentDim/m.Heads)%max(c.LatentChannels, 1) != 0 {
		bad("%d heads over latent_dim %d do not pool evenly to %d channels", m.Heads, m.LatentDim, c.LatentChannels)
	}
	if len(m.DecoderKernels) != len(m.DecoderRates) || len(m.DecoderRates) == 0 {
		bad("decoder_rates %v need decoder_kernel_sizes (got %v)", m.DecoderRates, m.DecoderKernels)
	}
	for i := range min(len(m.DecoderKernels), len(m.DecoderRates)) {
		if k, r := m.DecoderKernels[i], m.DecoderRates[i]; r < 1 || k < r || (k-r)%2 != 0 {
			bad("upsample %d: kernel %d, rate %d; want kernel-rate even and non-negative", i, k, r)
		}
	}
	if prod(m.DecoderRates) != prod(m.EncoderRates) {
		bad("decoder_rates %v do not undo encoder_rates %v", m.DecoderRates, m.EncoderRates)
	}
	if m.DecoderDim>>len(m.DecoderRates) < 1 {
		bad("decoder_dim %d cannot halve %d times", m.DecoderDim, len(m.DecoderRates))
	}
	if len(c.LatentsMean) != c.LatentChannels || len(c.LatentsStd) != c.LatentChannels {
		bad("latents_mean (%d) and latents_std (%d) need %d values", len(c.LatentsMean), len(c.LatentsStd), c.LatentChannels)
	}
	for i, sd := range c.LatentsStd {
		if !(sd > 0) {
			bad("latents_std[%d] = %g is not positive", i, sd)
		}
	}
	if c.SampleRate != 0 && m.SampleRate != 0 && c.SampleRate != m.SampleRate {
		bad("sample_rate %d in config.json, %d in metadata.json", c.SampleRate, m.SampleRate)
	}
	return errors.Join(errs...)
}
