package engine

import (
	"context"
	"fmt"
	"math"
	"time"

	"h3studio/engine/ggml"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/engine/vae"
)

// audioWindow is the audio decoder's window in latent steps (10 s), with
// audioContext steps decoded and dropped on each side, so a 15 s track is
// never one graph.
const (
	audioWindow  = 400
	audioContext = 16
)

// decode turns the target latents into the clip: the soundtrack first (the
// audio VAE is small, and the muxer wants it before the frames), then the
// frames, streamed from the video VAE decoder to the Output one at a time.
// The context is checked before every frame.
func (g *generation) decode(ctx context.Context) error {
	ta := time.Now()
	lay := g.text.layout
	// The decoder's first frames come after the soundtrack and its first
	// window, seconds in: until then the plan's estimate is the ETA. After,
	// the frames' own pace is, timed from the video decoder's start, as the
	// soundtrack's seconds are behind it (counted in, the demo's first
	// frame promised five minutes more).
	var tv time.Time
	report := func(frames int) {
		el := time.Since(ta)
		eta := phaseETA(g.estimated(PhaseDecode), 0, el)
		if frames > 0 {
			eta = phaseETA(0, float64(frames)/float64(lay.Frames), time.Since(tv))
		}
		g.sink(Event{Phase: PhaseDecode, Step: frames, Total: lay.Frames, Elapsed: el, ETA: eta})
	}
	report(0)
	sound, err := g.decodeAudio(ctx)
	if err != nil {
		return err
	}
	g.timePart("audio-vae-decode", ta)
	report(0)
	if err := ctx.Err(); err != nil {
		return err
	}
	c := lay.Canvas
	if err := g.req.Output.Begin(c.Width, c.Height, lay.Frames, sound); err != nil {
		return err
	}
	src, cfg, err := g.videoVAE()
	if err != nil {
		return err
	}
	defer src.Close()
	dec, err := vae.LoadVideoDecoder(g.e.backend, src, cfg, VideoDecodeOptions(g.plan, g.e.precision()))
	if err != nil {
		return err
	}
	defer dec.Close()
	if n := dec.Frames(g.latent[1]); n != lay.Frames {
		return fmt.Errorf("the video VAE decodes %d latent frames to %d frames, the plan wants %d", g.latent[1], n, lay.Frames)
	}
	z := vae.Latent{C: g.latent[0], T: g.latent[1], H: g.latent[2], W: g.latent[3], Data: g.video}
	px := Pixels{Width: c.Width, Height: c.Height, RGB: make([]byte, 3*c.Width*c.Height)}
	tv = time.Now()
	defer g.timePart("video-vae-decode", tv)
	return dec.Decode(ctx, z, func(t int, frame []float32) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		g.tap("decode.frame", t, frame)
		packRGB(px.RGB, frame, c.Width*c.Height)
		if err := g.req.Output.Frame(t, px); err != nil {
			return err
		}
		report(t + 1)
		return nil
	})
}

// VideoDecodeOptions is how the video VAE decodes under plan p: the
// config's tile, unless the planner found the decoder tight (it streams
// it), where one call's activations are bounded by what the decode phase
// has left, which shrinks the tile (vae.DecodeTile). Generate and
// `h3studio bench --vae` decode with it.
func VideoDecodeOptions(p *plan.Plan, prec ggml.Precision) vae.DecodeOptions {
	opt := vae.DecodeOptions{Precision: prec}
	if p.Residency.VAEDecoder != plan.Streamed {
		return opt
	}
	for _, ph := range p.Memory.Phases {
		if ph.Name == plan.PhaseDecode {
			opt.MemoryBudget = max(ph.ScratchBytes, 1<<28)
		}
	}
	return opt
}

// decodeAudio runs the audio VAE decoder and trims the track to the
// video's length: the latent grid is 40 Hz, so round(F·40/24) latents
// cover up to half a latent step (12.5 ms) more than F frames, and
// the muxed streams should end together.
func (g *generation) decodeAudio(ctx context.Context) (Audio, error) {
	src, cfg, err := g.audioVAE()
	if err != nil {
		return Audio{}, err
	}
	defer src.Close()
	dec, err := vae.LoadAudio(g.e.backend, src, cfg, vae.AudioDecoderPart, vae.AudioOptions{ChunkLatents: audioWindow, ContextLatents: audioContext, Precision: g.e.precision()})
	if err != nil {
		return Audio{}, err
	}
	defer dec.Close()
	lay := g.text.layout
	out, err := dec.Decode(ctx, vae.AudioLatent{C: cfg.LatentChannels, T: lay.AudioLatents, Data: g.audio})
	if err != nil {
		return Audio{}, err
	}
	g.tap("decode.audio", -1, out.Data)
	n := min(out.Samples, int(math.Round(float64(lay.Frames)*float64(cfg.SampleRate)/layout.FPS)))
	a := Audio{Samples: make([]float32, 2*n)}
	for i := 0; i < n; i++ {
		a.Samples[2*i] = out.Data[i]
		a.Samples[2*i+1] = out.Data[out.Samples+i]
	}
	return a, nil
}

// packRGB quantises a decoded frame [3][n] in [0, 1] to packed 8-bit RGB,
// rounding to nearest; NaN becomes 0.
func packRGB(dst []byte, frame []float32, n int) {
	for ch := 0; ch < 3; ch++ {
		src := frame[ch*n : (ch+1)*n]
		for i, v := range src {
			x := float64(v)*255 + 0.5
			switch {
			case !(x > 0):
				dst[3*i+ch] = 0
			case x >= 255:
				dst[3*i+ch] = 255
			default:
				dst[3*i+ch] = byte(x)
			}
		}
	}
}
