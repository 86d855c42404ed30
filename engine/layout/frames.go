package layout

import "math"

const (
	// FPS is H3's video frame rate.
	FPS = 24
	// AudioLatentRate is audio latents per second: 32 kHz with hop 800.
	AudioLatentRate = 40
	// AudioSampleRate and AudioHop define the audio VAE's time grid.
	AudioSampleRate = 32000
	AudioHop        = 800
	// MinFrames and MaxFrames bound aligned output lengths (h3.c's range;
	// the release serves 96..360 requested frames).
	MinFrames = 22
	MaxFrames = 362
	// frameCycle is the video VAE's temporal chunk: 17 frames -> 5 latents.
	frameCycle = 17
	// MaxAudioSeconds caps each audio reference and their total.
	MaxAudioSeconds = 15.0
	// MinAudioSeconds is the shortest usable audio reference.
	MinAudioSeconds = 2.0
	// qwenSampleStride is 2 fps at 24 fps: every 12th frame goes to Qwen.
	qwenSampleStride = 12
)

// frameSpan is the number of pixel frames each latent frame advances, by
// its index mod 5: the first latent of every 17-frame chunk covers one frame.
var frameSpan = [5]int{1, 4, 4, 4, 4}

// frameUnit is one pixel frame in RoPE time units (one audio latent, 1/40 s).
const frameUnit = float64(AudioLatentRate) / FPS // 5/3

// AlignFrames rounds a requested frame count up to the next 17n+5.
func AlignFrames(requested int) int {
	v := max(requested, 5)
	if r := (v - 5) % frameCycle; r != 0 {
		v += frameCycle - r
	}
	return v
}

// FramesForSeconds converts a duration to frames at 24 fps, rounded up, then
// aligned: 10 s -> 243 frames.
func FramesForSeconds(s float64) int {
	return AlignFrames(int(math.Ceil(s*FPS - 1e-9)))
}

// LatentFrames is the target video's latent length for aligned frames F:
// 5n+2 for F = 17n+5.
func LatentFrames(frames int) int {
	if frames <= 5 {
		return 2
	}
	return (frames-5)/frameCycle*5 + 2
}

// AudioLatents is the target audio latent length, round(F*40/24).
func AudioLatents(frames int) int {
	return int(math.Round(float64(frames) * AudioLatentRate / FPS))
}

// AudioLatentsForSamples is a reference clip's latent length: the encoder
// right-pads to a whole hop.
func AudioLatentsForSamples(samples int) int {
	return (samples + AudioHop - 1) / AudioHop
}

// SoundtrackRate is the rate the official pipeline extracts a video's
// soundtrack at before resampling to 32 kHz.
const SoundtrackRate = 44100

// AudioSamplesFrom is how many 32 kHz samples the official audio chain
// yields for seconds of audio at the source's rate (0: 32 kHz): FFmpeg cuts
// round(seconds·rate) samples, then torchaudio's resample gives
// ceil(n·32000/rate) (SGLang's reference_encoding._load_waveform).
func AudioSamplesFrom(seconds float64, rate int) int {
	if rate <= 0 {
		rate = AudioSampleRate
	}
	n := int(math.Round(seconds * float64(rate)))
	if rate == AudioSampleRate {
		return n
	}
	return int((int64(n)*AudioSampleRate + int64(rate) - 1) / int64(rate))
}

// AudioSamples is the sample count of a duration at 32 kHz.
func AudioSamples(seconds float64) int {
	return int(math.Round(seconds * AudioSampleRate))
}

// VideoConvention selects how a reference clip's latent length is counted.
type VideoConvention int

const (
	// ConventionOfficial is the official serving path: the VAE keeps the
	// first 17k+5 of the F' decoded frames (SGLang's get_suitable_video_length
	// in trim mode) and encodes them as 17-frame clips with 3 tokens dropped,
	// giving 5k+2 latents.
	ConventionOfficial VideoConvention = iota
	// ConventionH3C is one continuous causal encode of all F' frames:
	// ceil(F'/4) latents.
	ConventionH3C
)

// RefVideoVAEFrames is how many of a reference clip's F' decoded frames
// the video VAE encodes: 17k+5 (at least 5) under the official convention,
// all of them under h3.c's. Qwen still samples all F' frames.
func RefVideoVAEFrames(frames int, c VideoConvention) int {
	if frames <= 0 || c == ConventionH3C || frames < 5 {
		return max(frames, 0)
	}
	return (frames-5)/frameCycle*frameCycle + 5
}

// RefVideoLatentFrames is the latent length of a reference clip of F'
// decoded frames: 107 frames give 32 (official: 107 = 17*6+5) or 27 (h3.c).
func RefVideoLatentFrames(frames int, c VideoConvention) int {
	if frames <= 0 {
		return 0
	}
	if c == ConventionH3C {
		return (frames + 3) / 4
	}
	return LatentFrames(RefVideoVAEFrames(frames, c))
}

// SpanSum is the RoPE time covered by n latent frames, in audio-latent units.
func SpanSum(latentFrames int) float64 {
	s := 0
	for k := 0; k < latentFrames; k++ {
		s += frameSpan[k%5]
	}
	return float64(s) * frameUnit
}

// QwenSamples lists the frame indices (at 24 fps) shown to Qwen for a clip
// of F' decoded frames: 2 fps, padded to an even count by repeating the last.
func QwenSamples(frames int) []int {
	var s []int
	for f := 0; f < frames; f += qwenSampleStride {
		s = append(s, f)
	}
	if len(s)%2 == 1 {
		s = append(s, s[len(s)-1])
	}
	return s
}
