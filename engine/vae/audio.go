package vae

import (
	"context"
	"fmt"
	"math"

	"h3studio/engine/ggml"
	"h3studio/engine/tap"
	"h3studio/engine/weights"
)

// Audio is stereo PCM [2][Samples] at the model's sample rate, in [-1, 1].
type Audio struct {
	Samples int
	Data    []float32
}

// AudioLatent is an audio latent [C][2][T] (channel, stereo side, step), the
// layout the DiT packs into rows.
type AudioLatent struct {
	C, T int
	Data []float32
}

const stereo = 2

func exp(x float32) float64 { return math.Exp(float64(x)) }

// AudioVAE runs the audio encoder and/or decoder.
type AudioVAE struct {
	cfg *AudioConfig
	b   *ggml.Backend
	ws  *weights.Module
	enc *audioEncoder
	dec *audioDecoder
	opt AudioOptions
	// Calls counts graph runs.
	Calls int
	// Tap, when set, receives the intermediates named in the parity
	// fixtures (tap.* of tools/fixtures/vae) from every graph.
	Tap     tap.Func
	inspect func(*ggml.Graph) // tests: sees every graph before it runs
}

// AudioPart selects what LoadAudio loads, so only the phase's weights are resident.
type AudioPart int

const (
	AudioEncoderPart AudioPart = iota // encoder, pre_block, mean_proj
	AudioDecoderPart                  // dec_in_proj and BigVGAN
)

// AudioOptions tunes the audio VAE; the zero value decodes in one graph.
type AudioOptions struct {
	// Precision.KV is the encoder's attention K/V type (zero: the
	// backend's). The audio VAE keeps its weights in f32: Precision.Weights
	// must be zero or F32.
	Precision ggml.Precision
	// ChunkLatents > 0 decodes windows of that many latent steps, each with
	// ContextLatents steps of context on both sides that are decoded and
	// thrown away, so a long track never needs one giant graph.
	ChunkLatents, ContextLatents int
}

// LoadAudio loads one half of the audio VAE from src onto b.
func LoadAudio(b *ggml.Backend, src weights.Source, cfg *AudioConfig, part AudioPart, o AudioOptions) (*AudioVAE, error) {
	if err := o.Precision.Check("vae", ggml.F32); err != nil {
		return nil, err
	}
	a := &AudioVAE{cfg: cfg, b: b, opt: o}
	var net any
	if part == AudioEncoderPart {
		a.enc = newAudioEncoder(cfg)
		net = a.enc
	} else {
		a.dec = newAudioDecoder(cfg)
		net = a.dec
	}
	ws, err := loadNet(b, src, net, ggml.F32)
	if err != nil {
		return nil, err
	}
	a.ws = ws
	return a, nil
}

// Close frees the weights.
func (a *AudioVAE) Close() { a.ws.Free() }

// WeightBytes is the backend memory the loaded weights take.
func (a *AudioVAE) WeightBytes() int { return a.ws.Size() }

// Latents is the latent length of n samples: ceil(n / hop).
func (a *AudioVAE) Latents(n int) int { return (n + a.cfg.Hop() - 1) / a.cfg.Hop() }

// Encode turns stereo audio into a normalised posterior-mean latent; the
// input is right-padded with zeros to a whole number of hops.
func (a *AudioVAE) Encode(ctx context.Context, x Audio) (AudioLatent, error) {
	if err := ctx.Err(); err != nil {
		return AudioLatent{}, err
	}
	if a.enc == nil {
		return AudioLatent{}, fmt.Errorf("vae: audio encode: the encoder is not loaded")
	}
	if x.Samples < 1 || len(x.Data) != stereo*x.Samples {
		return AudioLatent{}, fmt.Errorf("vae: audio encode: %d values for %d stereo samples", len(x.Data), x.Samples)
	}
	t := a.Latents(x.Samples)
	n := t * a.cfg.Hop()
	wave := make([]float32, stereo*n)
	for s := range stereo {
		copy(wave[s*n:], x.Data[s*x.Samples:][:x.Samples])
	}
	g := a.b.NewGraph(0)
	defer g.Free()
	in := g.Input("waveform", ggml.F32, n, 1, stereo)
	in.SetF32(wave)
	tp := tap.On(g, a.Tap)
	z := a.enc.Forward(g, in, a.opt.Precision.KV, tp)
	g.Output(z)
	if err := a.compute(g, tp); err != nil {
		return AudioLatent{}, err
	}
	v := z.F32() // [C, T, 2]: memory [side][t][c]
	c := a.cfg.LatentChannels
	out := AudioLatent{C: c, T: t, Data: make([]float32, c*stereo*t)}
	for s := range stereo {
		for i := range t {
			for ch := range c {
				mu, sd := float32(a.cfg.LatentsMean[ch]), float32(a.cfg.LatentsStd[ch])
				out.Data[(ch*stereo+s)*t+i] = (v[(s*t+i)*c+ch] - mu) / sd
			}
		}
	}
	return out, nil
}

func (a *AudioVAE) compute(g *ggml.Graph, tp *tap.Graph) error {
	if a.inspect != nil {
		a.inspect(g)
	}
	if err := g.Compute(); err != nil {
		return fmt.Errorf("vae: audio: %w", err)
	}
	a.Calls++
	tp.Deliver()
	return nil
}

// Decode turns a normalised latent into stereo audio of T·hop samples,
// clamped to [-1, 1]; with ChunkLatents set it decodes overlapping windows.
func (a *AudioVAE) Decode(ctx context.Context, z AudioLatent) (Audio, error) {
	if a.dec == nil {
		return Audio{}, fmt.Errorf("vae: audio decode: the decoder is not loaded")
	}
	c := a.cfg.LatentChannels
	if z.C != c || z.T < 1 || len(z.Data) != c*stereo*z.T {
		return Audio{}, fmt.Errorf("vae: audio decode: latent %dx2x%d (%d values), want %d channels", z.C, z.T, len(z.Data), c)
	}
	hop := a.cfg.Hop()
	out := Audio{Samples: z.T * hop, Data: make([]float32, stereo*z.T*hop)}
	chunk := a.opt.ChunkLatents
	if chunk <= 0 {
		chunk = z.T
	}
	for start := 0; start < z.T; start += chunk {
		lo := max(0, start-a.opt.ContextLatents)
		hi := min(z.T, start+chunk+a.opt.ContextLatents)
		if err := ctx.Err(); err != nil {
			return Audio{}, err
		}
		wave, err := a.decodeWindow(z, lo, hi)
		if err != nil {
			return Audio{}, err
		}
		n := (hi - lo) * hop
		keep := min(chunk, z.T-start) * hop
		for s := range stereo {
			copy(out.Data[s*out.Samples+start*hop:][:keep], wave[s*n+(start-lo)*hop:][:keep])
		}
	}
	for i, v := range out.Data {
		out.Data[i] = min(max(v, -1), 1)
	}
	return out, nil
}

// decodeWindow decodes latent steps [lo, hi) to [2][(hi-lo)·hop] samples.
func (a *AudioVAE) decodeWindow(z AudioLatent, lo, hi int) ([]float32, error) {
	c, t := a.cfg.LatentChannels, hi-lo
	x := make([]float32, stereo*c*t) // ggml [T, C, 2]
	for s := range stereo {
		for ch := range c {
			mu, sd := float32(a.cfg.LatentsMean[ch]), float32(a.cfg.LatentsStd[ch])
			for i := range t {
				x[(s*c+ch)*t+i] = z.Data[(ch*stereo+s)*z.T+lo+i]*sd + mu
			}
		}
	}
	g := a.b.NewGraph(0)
	defer g.Free()
	in := g.Input("latent", ggml.F32, t, c, stereo)
	in.SetF32(x)
	tp := tap.On(g, a.Tap)
	y := a.dec.Forward(g, in, tp)
	g.Output(y)
	if err := a.compute(g, tp); err != nil {
		return nil, err
	}
	return y.F32(), nil // [L, 1, 2]: memory [side][sample]
}
