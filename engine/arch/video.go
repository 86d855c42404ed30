package arch

import (
	"encoding/json"
	"errors"
	"fmt"
)

// VideoVAE is the video VAE's configuration: the wrapper
// (video_vae/config.json: latent statistics, clip and tile recipe) merged
// with the network (video_vae/source/config.json).
type VideoVAE struct {
	ClassName      string    `json:"_class_name,omitempty"`
	SourcePath     string    `json:"source_path,omitempty"`
	LatentChannels int       `json:"latent_channels"`
	ClipLength     int       `json:"vae_clip_length"`
	TokenDrop      int       `json:"vae_token_drop"`
	TileSize       int       `json:"vae_tile_size"`
	TileOverlapMin int       `json:"vae_tile_overlap_min"`
	LatentsMean    []float64 `json:"latents_mean"`
	LatentsStd     []float64 `json:"latents_std"`

	Source VideoVAESource `json:"-"`
}

// VideoVAESource is video_vae/source/config.json (AutoencoderKLLegacy).
type VideoVAESource struct {
	ClassName    string `json:"_class_name,omitempty"`
	InChannels   int    `json:"in_channels"`
	OutChannels  int    `json:"out_ch"`
	Ch           int    `json:"ch"`
	ChMult       []int  `json:"ch_mult"`
	NumResBlocks int    `json:"num_res_blocks"`
	SpaceDown    []int  `json:"space_down"`
	TimeDown     []int  `json:"time_down"`
	ZChannels    int    `json:"z_channels"`
	EmbedDim     int    `json:"embed_dim"`
	// VAERatio and VAERatioT restate the products of space_down and
	// time_down; Validate checks them when present.
	VAERatio      int        `json:"vae_ratio,omitempty"`
	VAERatioT     int        `json:"vae_ratio_t,omitempty"`
	PaddingMode   string     `json:"padding_mode"`
	TIsolatedGN   bool       `json:"use_t_isolated_gn"`
	CausalEncoder bool       `json:"causal_encoder"`
	Use3DConv     bool       `json:"use_3d_conv"`
	UseVitDecoder bool       `json:"use_vit_decoder"`
	PixelNormType string     `json:"pixel_norm_type"`
	ScalingFactor float64    `json:"scaling_factor"`
	ShiftFactor   float64    `json:"shift_factor"`
	ViT           ViTDecoder `json:"vit_decoder_kwargs"`
}

// ViTDecoder is source/config.json's vit_decoder_kwargs.
type ViTDecoder struct {
	Layers       int     `json:"num_layers"`
	Heads        int     `json:"heads"`
	DimHead      int     `json:"dim_head"`
	RopeTheta    float64 `json:"rope_theta"`
	RopeDimRatio float64 `json:"rope_dim_ratio"`
	NormType     string  `json:"norm_type"`
	QKNormType   string  `json:"qk_norm_type"`
	QKNormAffine bool    `json:"qk_norm_affine"`
	FFNGated     bool    `json:"ffn_use_gated"`
	FFNAct       string  `json:"ffn_activation_fn"`
}

// Fixed parts of the video VAE that no config key states; the loaders
// check them against tensor shapes.
const (
	GroupNormGroups = 32 // encoder GroupNorm
	RegisterTokens  = 4  // ViT decoder register tokens
	FFNMult         = 4  // ViT decoder SwiGLU width over dim
)

// SpatialRatio is the pixel size of one latent cell (16 in the release).
func (c *VideoVAE) SpatialRatio() int { return prod(c.Source.SpaceDown) }

// TemporalRatio is the frames per latent step inside a clip (4).
func (c *VideoVAE) TemporalRatio() int { return prod(c.Source.TimeDown) }

// Dim is the ViT decoder width (2048 in the release).
func (c *VideoVAE) Dim() int { return c.Source.ViT.Heads * c.Source.ViT.DimHead }

// RopePairs is the number of rotated pairs per head: 3 axes share
// int(dim_head·ratio)/6 frequencies each (8 of 32 pairs in the release).
func (c *VideoVAE) RopePairs() int {
	return 3 * (int(float64(c.Source.ViT.DimHead)*c.Source.ViT.RopeDimRatio) / 6)
}

func prod(v []int) int {
	p := 1
	for _, x := range v {
		p *= x
	}
	return p
}

// ParseVideoVAE reads video_vae/config.json (wrapper) and
// video_vae/source/config.json (source) and validates them.
func ParseVideoVAE(wrapper, source []byte) (*VideoVAE, error) {
	c := &VideoVAE{}
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

// Validate reports every problem with the configuration at once.
func (c *VideoVAE) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("vae: video config: "+format, args...))
	}
	c.validateEncoder(bad)
	v := c.Source.ViT
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

// validateEncoder checks the source config's encoder half.
func (c *VideoVAE) validateEncoder(bad func(string, ...any)) {
	s := &c.Source
	n := len(s.ChMult)
	if n == 0 || len(s.SpaceDown) != n || len(s.TimeDown) != n {
		bad("ch_mult, space_down and time_down need one entry per level, got %d, %d, %d", n, len(s.SpaceDown), len(s.TimeDown))
	}
	for i, m := range s.ChMult {
		if m <= 0 || s.Ch*m%GroupNormGroups != 0 {
			bad("level %d has %d channels, not a positive multiple of the %d norm groups", i, s.Ch*m, GroupNormGroups)
		}
	}
	for i := range min(len(s.SpaceDown), len(s.TimeDown)) {
		if s.SpaceDown[i] < 1 || s.SpaceDown[i] > 2 || s.TimeDown[i] < 1 || s.TimeDown[i] > 2 {
			bad("level %d downsamples by space %d, time %d; only 1 or 2 are supported", i, s.SpaceDown[i], s.TimeDown[i])
		}
	}
	if (s.VAERatio != 0 && s.VAERatio != c.SpatialRatio()) || (s.VAERatioT != 0 && s.VAERatioT != c.TemporalRatio()) {
		bad("vae_ratio %d / vae_ratio_t %d differ from the downsampling's %d / %d", s.VAERatio, s.VAERatioT, c.SpatialRatio(), c.TemporalRatio())
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
}

// EncoderParams is the causal 3-D CNN encoder with quant_conv (≈0.18 B in
// the release), counted from the config as the checkpoint lays it out.
func (c *VideoVAE) EncoderParams() int64 {
	s := &c.Source
	conv := func(out, in, k int) int64 { return int64(out)*int64(in)*int64(k*k*k) + int64(out) }
	first := s.Ch * s.ChMult[0]
	n := conv(first, s.InChannels, 3)
	prev := first
	for lvl, m := range s.ChMult {
		ch := s.Ch * m
		for b := 0; b < s.NumResBlocks; b++ {
			in := ch
			if b == 0 {
				in = prev
			}
			n += int64(2*in) + conv(ch, in, 3) + int64(2*ch) + conv(ch, ch, 3)
			if in != ch {
				n += conv(ch, in, 1) // nin_shortcut
			}
		}
		if s.SpaceDown[lvl]*s.TimeDown[lvl] > 1 {
			n += conv(ch, ch, 3)
		}
		prev = ch
	}
	return n + int64(2*prev) + conv(2*s.ZChannels, prev, 3) + conv(2*s.EmbedDim, 2*s.ZChannels, 1)
}

// DecoderParams is post_quant_conv and the ViT3D decoder (≈2.42 B in the release).
func (c *VideoVAE) DecoderParams() int64 {
	s, dim := &c.Source, int64(c.Dim())
	post := int64(s.ZChannels)*int64(s.EmbedDim) + int64(s.ZChannels)
	embed := dim*int64(s.ZChannels) + dim + (RegisterTokens+1)*dim // x_embedder, registers, mask token
	ffn := FFNMult * dim
	block := dim + (3*dim*dim + 3*dim) + (dim*dim + dim) + dim + dim + (2*ffn*dim + 2*ffn) + (dim*ffn + dim) + dim
	out := int64(s.OutChannels * c.TemporalRatio() * c.SpatialRatio() * c.SpatialRatio())
	return post + embed + int64(s.ViT.Layers)*block + 2*dim + out*dim + out
}

// TileCount is how many tiles of tile pixels, overlapping by at least
// minOverlap, the video VAE splits an axis of n pixels into (1 when the
// tile covers it): the fewest whose span reaches n. The encoder and the
// decoder tile by it, and the planner prices their work by it (tiles x
// tile area: at 320 px wide a 256-px tile encodes 1.6x the pixels).
func TileCount(n, tile, minOverlap int) int {
	if tile >= n {
		return 1
	}
	count := (n + tile - 1) / tile
	for tile*count-minOverlap*(count-1) < n {
		count++
	}
	return count
}

// EncodedClips is the frames the video VAE encoder runs over, clip by
// clip, for a video of n > 1 frames: clips of clip frames (the last padded
// by repeating its last frame), each to (clip-1)/ratio+1 latent steps, of
// which the last drop are dropped. The encoder is causal in time (step j
// of a clip sees its frames up to ratio·j), so each clip is cut after the
// last frame its kept steps see: the release's 17k+5 frames encode 17k+5,
// not the 17(k+1) of whole clips. vae's EncodeVideo encodes these cuts and
// the planner prices reference clips by their sum (EncodedFrames).
func EncodedClips(n, clip, ratio, drop int) []int {
	per := (clip-1)/ratio + 1
	keep := (n+clip-1)/clip*per - drop
	var cuts []int
	for at := 0; at < keep; at += per {
		cuts = append(cuts, (min(per, keep-at)-1)*ratio+1)
	}
	return cuts
}

// EncodedFrames is how many frames the video VAE encoder runs over for a
// clip of n > 1 frames: EncodedClips' cuts together.
func EncodedFrames(n, clip, ratio, drop int) int {
	total := 0
	for _, f := range EncodedClips(n, clip, ratio, drop) {
		total += f
	}
	return total
}

// DecoderCallBytes is the compute scratch ggml reserves for one ViT
// decoder call over tokens tokens of width dim, whose head writes patch
// values per token. Two moments bound it: inside a block, where the
// residual stream, its normed copy and the SwiGLU's gate|value and product
// are live together (2·dim + 3·FFNMult·dim floats per token; the
// allocator has reused the attention's buffers by then), and at the head,
// where the patch meets the last hidden state. Measured on the CPU and the
// H200 (bench --vae's call buffers): 206.6 MB for the release decoder's
// 1,797-token call (this gives 206.1 MB), 22.3 MB for the tiny one's.
func DecoderCallBytes(dim, patch, tokens int) int64 {
	return int64(tokens) * int64(max(2*dim+3*FFNMult*dim, patch+dim)) * 4
}
