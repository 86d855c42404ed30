package vae

import "h3studio/engine/arch"

// VideoConfig is the video VAE's configuration (video_vae/config.json
// merged with video_vae/source/config.json), declared once in engine/arch.
type VideoConfig = arch.VideoVAE

// VideoSource is video_vae/source/config.json (AutoencoderKLLegacy).
type VideoSource = arch.VideoVAESource

// ViTDecoder is source/config.json's vit_decoder_kwargs.
type ViTDecoder = arch.ViTDecoder

// AudioConfig is the audio VAE's configuration (audio_vae/config.json plus
// metadata.json's kwargs), declared once in engine/arch.
type AudioConfig = arch.AudioVAE

// AudioModel is metadata.json's metadata.kwargs.
type AudioModel = arch.AudioVAEModel

// Fixed parts of the architecture that no config key states; the weight
// loaders check them against tensor shapes.
const (
	groupNormGroups  = arch.GroupNormGroups
	groupNormEps     = 1e-6
	vitEps           = 1e-5
	registerTokens   = arch.RegisterTokens
	ffnMult          = arch.FFNMult
	decoderSuffix    = registerTokens + 1 // registers plus one zero token
	audioSnakeEps    = 1e-9
	audioLayerNormEp = 1e-5
	audioFilterTaps  = arch.AudioFilterTaps
	audioResampling  = 2 // the anti-aliased activations' up/down ratio
)

// The audio resblock and residual-unit layouts (arch states them).
var (
	audioResKernels   = arch.AudioResKernels
	audioResDilations = arch.AudioResDilations
	audioEncDilations = arch.AudioEncDilations
)

// ImageNet statistics the encoder normalises pixels with and the decoder
// reverts (pixel_norm_type "imagenet").
var (
	pixelMean = [3]float64{0.485, 0.456, 0.406}
	pixelStd  = [3]float64{0.229, 0.224, 0.225}
)

// ParseVideoConfig is arch.ParseVideoVAE.
func ParseVideoConfig(wrapper, source []byte) (*VideoConfig, error) {
	return arch.ParseVideoVAE(wrapper, source)
}

// ReadVideoConfig is arch.ReadVideoVAE: the two config files of a video_vae
// folder given the path of its source/config.json.
func ReadVideoConfig(sourceConfig string) (*VideoConfig, error) {
	return arch.ReadVideoVAE(sourceConfig)
}

// ParseAudioConfig is arch.ParseAudioVAE.
func ParseAudioConfig(config, metadata []byte) (*AudioConfig, error) {
	return arch.ParseAudioVAE(config, metadata)
}

// ReadAudioConfig is arch.ReadAudioVAE: config.json and metadata.json of an
// audio_vae folder given the path of its config.json.
func ReadAudioConfig(config string) (*AudioConfig, error) { return arch.ReadAudioVAE(config) }
