package vae

import (
	"context"
	"fmt"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/tap"
	"h3studio/engine/weights"
	"h3studio/engine/weights/safetensors"
)

// DefaultConvBudget is the im2col scratch one encoder convolution may use.
const DefaultConvBudget = 1 << 30

// VideoEncoder turns RGB frames into normalised video latents.
type VideoEncoder struct {
	cfg *VideoConfig
	b   *ggml.Backend
	ws  *weights.Module
	net *videoEncoder
	// TileSize overrides the config's vae_tile_size (pixels) when > 0.
	TileSize int
	// ConvBudget bounds the im2col scratch of one convolution in bytes
	// (0: DefaultConvBudget); frames are convolved in groups to stay within it.
	ConvBudget int64
	// HalfLatent rounds the posterior mean to float16 before whitening, as
	// the official encode does (SGLang's encode_videos/encode_images with
	// use_fp16_latent=True); ComfyUI keeps float32.
	HalfLatent bool
	// Tap, when set, receives the intermediates named in the parity
	// fixtures (tap.* of tools/fixtures/vae) from every graph.
	Tap     tap.Func
	inspect func(*ggml.Graph) // tests: sees every graph before it runs
}

// LoadVideoEncoder loads the encoder and quant_conv weights from src onto b.
func LoadVideoEncoder(b *ggml.Backend, src weights.Source, cfg *VideoConfig) (*VideoEncoder, error) {
	net := newVideoEncoder(cfg)
	ws, err := loadNet(b, src, net, ggml.F32)
	if err != nil {
		return nil, err
	}
	return &VideoEncoder{cfg: cfg, b: b, ws: ws, net: net}, nil
}

// Close frees the weights.
func (e *VideoEncoder) Close() { e.ws.Free() }

// WeightBytes is the backend memory the loaded weights take.
func (e *VideoEncoder) WeightBytes() int { return e.ws.Size() }

// Encoding and decoding stop between graphs when ctx is done and return
// its error.

// EncodeImage encodes one frame (a Clip with T = 1, values in [-1, 1]) to a
// one-step latent, through the single-image path (causal padding only).
func (e *VideoEncoder) EncodeImage(ctx context.Context, img Clip) (Latent, error) {
	if img.T != 1 {
		return Latent{}, fmt.Errorf("vae: EncodeImage: got %d frames, want 1", img.T)
	}
	m, err := e.moments(ctx, e.normalise(img))
	if err != nil {
		return Latent{}, err
	}
	return e.whiten(m.crop(m.t-1, m.t, 0, m.h, 0, m.w)), nil
}

// EncodeVideo encodes frames (values in [-1, 1]) the release's way: clips of
// vae_clip_length frames (the last one padded by repeating its last frame),
// each to ceil(clip/4) steps, concatenated, and the final vae_token_drop
// steps dropped. 39 frames give 3 clips, 15 steps, 12 kept. Each clip is
// encoded only as far as its kept steps see (arch.EncodedClips: the
// encoder is causal in time), so 39 frames encode 17+17+5, not 3x17, for
// the same latent; the planner prices the same cuts.
func (e *VideoEncoder) EncodeVideo(ctx context.Context, v Clip) (Latent, error) {
	if v.T < 2 {
		return Latent{}, fmt.Errorf("vae: EncodeVideo: %d frames; use EncodeImage for one", v.T)
	}
	n, r := e.cfg.ClipLength, e.cfg.TemporalRatio()
	cuts := arch.EncodedClips(v.T, n, r, e.cfg.TokenDrop)
	steps := make([]int, len(cuts)) // the latent steps each cut gives
	keep := 0
	for i, frames := range cuts {
		steps[i] = (frames-1)/r + 1
		keep += steps[i]
	}
	var out vol
	at := 0
	for i, frames := range cuts {
		m, err := e.moments(ctx, e.normalise(clipFrames(v, i*n, frames)))
		if err != nil {
			return Latent{}, err
		}
		if m.t != steps[i] {
			return Latent{}, fmt.Errorf("vae: EncodeVideo: %d frames gave %d steps, want %d", frames, m.t, steps[i])
		}
		if i == 0 {
			out = newVol(m.c, keep, m.h, m.w)
		}
		out.paste(m, at, 0, 0)
		at += steps[i]
	}
	return e.whiten(out), nil
}

// clipFrames returns frames start..start+n-1 of v, repeating its last
// frame past the end.
func clipFrames(v Clip, start, n int) Clip {
	c := Clip{T: n, H: v.H, W: v.W, Data: make([]float32, 3*n*v.H*v.W)}
	plane := v.H * v.W
	for ch := range 3 {
		for t := range n {
			src := min(start+t, v.T-1)
			copy(c.Data[(ch*n+t)*plane:][:plane], v.Data[(ch*v.T+src)*plane:][:plane])
		}
	}
	return c
}

// normalise maps [-1, 1] pixels to ImageNet-normalised [0, 1] pixels.
func (e *VideoEncoder) normalise(c Clip) vol {
	v := vol{3, c.T, c.H, c.W, make([]float32, len(c.Data))}
	per := c.T * c.H * c.W
	for ch := range 3 {
		for i := range per {
			x := float64(c.Data[ch*per+i])
			v.d[ch*per+i] = float32(((x+1)*0.5 - pixelMean[ch]) / pixelStd[ch])
		}
	}
	return v
}

// whiten keeps the posterior mean (the first latent_channels moments) and
// applies (mean - latents_mean) / latents_std.
func (e *VideoEncoder) whiten(m vol) Latent {
	c := e.cfg.LatentChannels
	mean := m.crop(0, m.t, 0, m.h, 0, m.w)
	mean.c = c
	per := m.t * m.h * m.w
	mean.d = mean.d[:c*per]
	if e.HalfLatent {
		for i, v := range mean.d {
			mean.d[i] = safetensors.F16ToF32(safetensors.F32ToF16(v))
		}
	}
	for ch := range c {
		mu, sd := float32(e.cfg.LatentsMean[ch]), float32(e.cfg.LatentsStd[ch])
		for i := range per {
			mean.d[ch*per+i] = (mean.d[ch*per+i] - mu) / sd
		}
	}
	return Latent{C: c, T: m.t, H: m.h, W: m.w, Data: mean.d}
}

// moments encodes normalised pixels with spatial tiling (blended in latent
// space) and returns the moments [2C][T'][H/16][W/16].
func (e *VideoEncoder) moments(ctx context.Context, x vol) (vol, error) {
	r := e.cfg.SpatialRatio()
	if x.h%r != 0 || x.w%r != 0 {
		return vol{}, fmt.Errorf("vae: encode: %dx%d pixels are not multiples of %d", x.w, x.h, r)
	}
	ts := e.cfg.TileSize
	if e.TileSize > 0 {
		ts = e.TileSize
	}
	ys := splitTiles(x.h, ts, e.cfg.TileOverlapMin, r)
	xs := splitTiles(x.w, ts, e.cfg.TileOverlapMin, r)
	rows := make([][]vol, len(ys.starts))
	for i := range ys.starts {
		for j := range xs.starts {
			tile := x.crop(0, x.t, ys.starts[i], ys.starts[i]+ys.sizes[i], xs.starts[j], xs.starts[j]+xs.sizes[j])
			m, err := e.encodeTile(ctx, tile)
			if err != nil {
				return vol{}, err
			}
			rows[i] = append(rows[i], m)
		}
	}
	if len(rows) == 1 && len(rows[0]) == 1 {
		return rows[0][0], nil
	}
	out := newVol(rows[0][0].c, rows[0][0].t, x.h/r, x.w/r)
	oy := 0
	for i, row := range rows {
		ox, th := 0, 0
		for j, tile := range row {
			if i > 0 {
				tile = blend(rows[i-1][j], tile, ys.overlaps[i-1]/r, axisH)
			}
			if j > 0 {
				tile = blend(row[j-1], tile, xs.overlaps[j-1]/r, axisW)
			}
			h, w := tile.h, tile.w
			if i < len(rows)-1 {
				h -= ys.overlaps[i] / r
			}
			if j < len(row)-1 {
				w -= xs.overlaps[j] / r
			}
			out.paste(tile.crop(0, tile.t, 0, h, 0, w), 0, oy, ox)
			ox += w
			th = h
		}
		oy += th
	}
	return out, nil
}

// encodeTile runs the encoder graph on one tile [3][T][h][w].
func (e *VideoEncoder) encodeTile(ctx context.Context, x vol) (vol, error) {
	if err := ctx.Err(); err != nil {
		return vol{}, err
	}
	g := e.b.NewGraph(0)
	defer g.Free()
	in := g.Input("pixels", ggml.F32, x.w, x.h, 3, x.t)
	in.SetF32(toGGMLVideo(x))
	budget := e.ConvBudget
	if budget == 0 {
		budget = DefaultConvBudget
	}
	tp := tap.On(g, e.Tap)
	m := e.net.Forward(g, in, budget, tp)
	g.Output(m)
	if e.inspect != nil {
		e.inspect(g)
	}
	if err := g.Compute(); err != nil {
		return vol{}, fmt.Errorf("vae: encode: %w", err)
	}
	tp.Deliver()
	return fromGGMLVideo(m.F32(), m.Ne(0), m.Ne(1), m.Ne(2), m.Ne(3)), nil
}

// toGGMLVideo lays [c][t][y][x] out as ggml [W, H, C, T] (memory [t][c][y][x]).
func toGGMLVideo(v vol) []float32 {
	out := make([]float32, len(v.d))
	plane := v.h * v.w
	for c := range v.c {
		for t := range v.t {
			copy(out[(t*v.c+c)*plane:][:plane], v.d[(c*v.t+t)*plane:][:plane])
		}
	}
	return out
}

// fromGGMLVideo reads ggml [W, H, C, T] back into [c][t][y][x].
func fromGGMLVideo(d []float32, w, h, c, t int) vol {
	v := newVol(c, t, h, w)
	plane := h * w
	for ch := range c {
		for f := range t {
			copy(v.d[(ch*t+f)*plane:][:plane], d[(f*c+ch)*plane:][:plane])
		}
	}
	return v
}
