package arch

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// AudioVAE is the audio VAE's configuration: audio_vae/config.json
// (latent statistics) plus the model kwargs of audio_vae/metadata.json.
type AudioVAE struct {
	ClassName      string    `json:"_class_name,omitempty"`
	LatentChannels int       `json:"latent_channels"`
	OutputChannel  int       `json:"output_channel,omitempty"`
	SampleRate     int       `json:"sample_rate"`
	LatentsMean    []float64 `json:"latents_mean"`
	LatentsStd     []float64 `json:"latents_std"`

	Model AudioVAEModel `json:"-"`
}

// AudioVAEModel is metadata.json's metadata.kwargs: the network shape.
type AudioVAEModel struct {
	SampleRate     int    `json:"sample_rate"`
	LatentChannels int    `json:"vae_latent_channels"`
	LatentDim      int    `json:"latent_dim"`
	DecoderDim     int    `json:"decoder_dim"`
	DecoderRates   []int  `json:"decoder_rates"`
	DecoderType    string `json:"decoder_type"`
	// DecoderKernels and Heads are not in the release metadata, where they
	// are fixed (9,9,4,4,4,4,4; 8 heads); other ports read these keys, and
	// the tiny model sets them.
	DecoderKernels []int `json:"decoder_kernel_sizes,omitempty"`
	EncoderDim     int   `json:"encoder_dim"`
	EncoderRates   []int `json:"encoder_rates"`
	AttnProj       bool  `json:"attn_proj"`
	Heads          int   `json:"num_attention_heads,omitempty"`
}

// Release values of the audio architecture that no config states.
var (
	releaseAudioHeads   = 8
	releaseAudioRates   = []int{5, 5, 2, 2, 2, 2, 2}
	releaseAudioKernels = []int{9, 9, 4, 4, 4, 4, 4}
	// AudioResKernels and AudioResDilations are the BigVGAN AMP resblocks
	// of every decoder stage (one resblock per kernel, each over all
	// dilations); AudioEncDilations the DAC residual units of every encoder stage.
	AudioResKernels   = []int{3, 7, 11}
	AudioResDilations = []int{1, 3, 5}
	AudioEncDilations = []int{1, 3, 9}
)

// Hop is the samples per latent step (800 in the release).
func (c *AudioVAE) Hop() int { return prod(c.Model.EncoderRates) }

// ParseAudioVAE reads audio_vae/config.json and audio_vae/metadata.json.
func ParseAudioVAE(config, metadata []byte) (*AudioVAE, error) {
	return parseAudioVAE(config, metadata, true)
}

func parseAudioVAE(config, metadata []byte, stats bool) (*AudioVAE, error) {
	c := &AudioVAE{}
	if err := json.Unmarshal(config, c); err != nil {
		return nil, fmt.Errorf("vae: audio_vae/config.json: %w", err)
	}
	var meta struct {
		Metadata struct {
			Kwargs AudioVAEModel `json:"kwargs"`
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
		c.Model.DecoderKernels = slices.Clone(releaseAudioKernels)
	}
	if err := c.validate(stats); err != nil {
		return nil, err
	}
	return c, nil
}

// Validate reports every problem with the configuration at once.
func (c *AudioVAE) Validate() error { return c.validate(true) }

// validate checks the config; without stats it accepts empty latent
// statistics (the release description, which knows the network but not
// the checkpoint's statistics).
func (c *AudioVAE) validate(stats bool) error {
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
	if (stats || len(c.LatentsMean)+len(c.LatentsStd) > 0) && (len(c.LatentsMean) != c.LatentChannels || len(c.LatentsStd) != c.LatentChannels) {
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

// Params is the whole audio VAE, encoder, pre_block, posterior projections
// and decoder (≈0.14 B in the release), counted from the config as the
// checkpoint lays it out (weight-normalised convolutions store weight_v
// plus one weight_g per output channel).
func (c *AudioVAE) Params() int64 {
	m := &c.Model
	wn := func(out, in, k int) int64 { return int64(out)*int64(in)*int64(k) + 2*int64(out) } // weight_v, weight_g, bias
	n := wn(m.EncoderDim, 1, 7)
	ch := m.EncoderDim
	for _, stride := range m.EncoderRates {
		unit := int64(ch) + wn(ch, ch, 7) + int64(ch) + wn(ch, ch, 1) // snake, conv k7, snake, conv k1
		n += int64(len(AudioEncDilations))*unit + int64(ch) + wn(2*ch, ch, 2*stride)
		ch *= 2
	}
	d, lc := int64(m.LatentDim), int64(c.LatentChannels)
	n += d + wn(m.LatentDim, m.LatentDim, 3) // final snake and conv
	lin := func(out, in int64) int64 { return out*in + out }
	pre := 2*d + 3*d*d + 3*d + lin(lc, lc) + 2*d + lin(lc, d) + 2*lc + 2*lc + 2*lin(2*lc, lc) + lin(lc, 2*lc)
	n += pre + 2*lin(lc, lc) + lin(d, lc) // pre_block, mean/logs_proj, dec_in_proj
	n += wn(m.DecoderDim, m.LatentDim, 7)
	ch = m.DecoderDim
	for i := range m.DecoderRates {
		out := ch / 2
		n += int64(ch)*int64(out)*int64(m.DecoderKernels[i]) + int64(ch) + int64(out) // transposed: g per input channel
		for _, k := range AudioResKernels {
			acts := int64(2*len(AudioResDilations)) * (2*int64(out) + 2*AudioFilterTaps)
			n += acts + int64(2*len(AudioResDilations))*wn(out, out, k)
		}
		ch = out
	}
	return n + 2*int64(ch) + 2*AudioFilterTaps + int64(ch)*7 + 1 // activation_post, conv_post (no bias)
}

// AudioFilterTaps is the Kaiser-sinc length of each anti-aliased
// activation's up- and down-sampling filter (stored as tensors).
const AudioFilterTaps = 12
