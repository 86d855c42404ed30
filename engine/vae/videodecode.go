package vae

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/tap"
	"h3studio/engine/weights"
)

// VideoDecoder turns normalised video latents into RGB frames.
type VideoDecoder struct {
	cfg *VideoConfig
	b   *ggml.Backend
	ws  *weights.Module
	net *videoDecoder
	opt DecodeOptions
	// Calls counts decoder graph runs (temporal chunks x spatial tiles);
	// GraphTime is their compute and read-back time, the rest of a decode
	// being host work (un-patchify, blending, frame conversion).
	Calls     int
	GraphTime time.Duration
	// Tap, when set, receives the intermediates named in the parity
	// fixtures (tap.* of tools/fixtures/vae) from every graph.
	Tap     tap.Func
	inspect func(*ggml.Graph) // tests: sees every graph before it runs
}

// DecodeOptions tunes the decoder; the zero value is the release recipe on
// the backend's fast attention.
type DecodeOptions struct {
	// Precision.KV is the attention K/V type (zero: the backend's);
	// Precision.Weights is how the matmul weights are kept: F32 (the zero
	// value, as the release stores them), F16 or BF16 (half the memory:
	// 4.8 GB instead of 9.7 GB), or Q8_0.
	Precision ggml.Precision
	// TileSize is the spatial tile in pixels (0: vae_tile_size, shrunk to
	// fit MemoryBudget). A tile as large as the canvas decodes untiled.
	TileSize int
	// MemoryBudget bounds the activations of one decoder call in bytes
	// (0: no bound beyond the tile size).
	MemoryBudget int64
	// Logger receives warnings (nil: slog.Default()).
	Logger *slog.Logger
}

// LoadVideoDecoder loads post_quant_conv and the ViT decoder from src onto b.
func LoadVideoDecoder(b *ggml.Backend, src weights.Source, cfg *VideoConfig, o DecodeOptions) (*VideoDecoder, error) {
	if err := o.Precision.Check("vae", ggml.F32, ggml.F16, ggml.BF16, ggml.Q8_0); err != nil {
		return nil, err
	}
	if o.Precision.Weights == ggml.StoreAs(ggml.Q8_0) && cfg.Dim()%32 != 0 {
		return nil, fmt.Errorf("vae: q8_0 decoder weights need a width divisible by 32, not %d", cfg.Dim())
	}
	net := newVideoDecoder(cfg)
	ws, err := loadNet(b, src, net, o.Precision.Weights.Or(ggml.F32))
	if err != nil {
		return nil, err
	}
	return &VideoDecoder{cfg: cfg, b: b, ws: ws, net: net, opt: o}, nil
}

// Close frees the weights.
func (d *VideoDecoder) Close() { d.ws.Free() }

// WeightBytes is the backend memory the loaded weights take.
func (d *VideoDecoder) WeightBytes() int { return d.ws.Size() }

// Frames is how many frames a latent of t steps decodes to (1 for t = 1;
// 22 for 7, 39 for 12).
func (d *VideoDecoder) Frames(t int) int {
	if t == 1 {
		return 1
	}
	return newTemporalPlan(t, d.cfg).frames
}

// TileBytes estimates the activation bytes of one decoder call of c on a
// tile of ts pixels (arch.DecoderCallBytes, the planner's formula too).
func TileBytes(c *VideoConfig, ts int) int64 {
	r := c.SpatialRatio()
	chunk := (c.ClipLength + c.TemporalRatio() - 1) / c.TemporalRatio()
	steps := chunk + mod(-c.TokenDrop, chunk)
	tokens := int64(steps*(ts/r)*(ts/r) + decoderSuffix)
	patch := c.Source.OutChannels * c.TemporalRatio() * r * r
	return arch.DecoderCallBytes(c.Dim(), patch, int(tokens))
}

// DecodeTile is the tile (pixels) the decoder uses under o: o.TileSize if
// set, else vae_tile_size shrunk in steps of one latent cell until one call
// fits o.MemoryBudget (never below twice the minimum overlap).
func DecodeTile(c *VideoConfig, o DecodeOptions) int {
	if o.TileSize > 0 {
		return o.TileSize
	}
	ts := c.TileSize
	r := c.SpatialRatio()
	for o.MemoryBudget > 0 && ts-r >= 2*c.TileOverlapMin && TileBytes(c, ts) > o.MemoryBudget {
		ts -= r
	}
	return ts
}

// Decode decodes a normalised latent and hands each finished frame [3][H][W]
// (values in [0, 1]) to emit in order, so a long clip never sits in memory.
func (d *VideoDecoder) Decode(ctx context.Context, z Latent, emit func(t int, frame []float32) error) error {
	if z.C != d.cfg.LatentChannels || len(z.Data) != z.C*z.T*z.H*z.W || z.T < 1 {
		return fmt.Errorf("vae: decode: latent %dx%dx%dx%d (%d values), want %d channels", z.C, z.T, z.H, z.W, len(z.Data), d.cfg.LatentChannels)
	}
	x := vol{z.C, z.T, z.H, z.W, make([]float32, len(z.Data))}
	per := z.T * z.H * z.W
	for c := range z.C {
		mu, sd := float32(d.cfg.LatentsMean[c]), float32(d.cfg.LatentsStd[c])
		for i := range per {
			x.d[c*per+i] = z.Data[c*per+i]*sd + mu
		}
	}
	w := &frameWriter{emit: emit, total: d.Frames(z.T)}
	defer func() {
		if w.nonFinite > 0 {
			log := d.opt.Logger
			if log == nil {
				log = slog.Default()
			}
			log.Warn("vae: decoded frames had NaN pixels; written as black", "pixels", w.nonFinite)
		}
	}()
	if z.T == 1 {
		raw, err := d.decodeTiled(ctx, x)
		if err != nil {
			return err
		}
		return w.write(raw.crop(raw.t-1, raw.t, 0, raw.h, 0, raw.w))
	}
	p := newTemporalPlan(z.T, d.cfg)
	if p.padTokens > 0 {
		padded := newVol(x.c, x.t+p.padTokens, x.h, x.w)
		padded.paste(x, 0, 0, 0)
		last := x.crop(x.t-1, x.t, 0, x.h, 0, x.w)
		for k := range p.padTokens {
			padded.paste(last, x.t+k, 0, 0)
		}
		x = padded
	}
	chunkFrames := p.chunkTokens * p.ratio
	var overlap *vol
	for i := range p.chunks {
		start := i * p.chunkTokens
		end := min(start+p.chunkTokens+p.overlapTokens, x.t)
		raw, err := d.decodeTiled(ctx, x.crop(start, end, 0, x.h, 0, x.w))
		if err != nil {
			return err
		}
		for j := range p.split {
			fs := j * chunkFrames
			fe := min(fs+chunkFrames, raw.t)
			if fe-fs <= p.prePad {
				continue
			}
			part := raw.crop(fs+p.prePad, fe, 0, raw.h, 0, raw.w)
			if j == 0 {
				if overlap != nil {
					part = blend(*overlap, part, p.overlapFrames, axisT)
					overlap = nil
				}
				if err := w.write(part); err != nil {
					return err
				}
			} else {
				overlap = &part
			}
		}
		if i == p.chunks-1 && overlap != nil {
			if err := w.write(*overlap); err != nil {
				return err
			}
		}
	}
	return nil
}

// DecodeClip decodes a whole latent into memory.
func (d *VideoDecoder) DecodeClip(ctx context.Context, z Latent) (Clip, error) {
	n := d.Frames(z.T)
	h, w := z.H*d.cfg.SpatialRatio(), z.W*d.cfg.SpatialRatio()
	c := Clip{T: n, H: h, W: w, Data: make([]float32, 3*n*h*w)}
	err := d.Decode(ctx, z, func(t int, f []float32) error {
		for ch := range 3 {
			copy(c.Data[(ch*n+t)*h*w:][:h*w], f[ch*h*w:][:h*w])
		}
		return nil
	})
	return c, err
}

// frameWriter de-normalises, clamps and emits frames, up to total.
type frameWriter struct {
	emit      func(int, []float32) error
	total     int
	next      int
	nonFinite int
}

func (w *frameWriter) write(part vol) error {
	plane := part.h * part.w
	for t := 0; t < part.t && w.next < w.total; t++ {
		f := make([]float32, 3*plane)
		for c := range 3 {
			sd, mu := float32(pixelStd[c]), float32(pixelMean[c])
			src := part.d[part.idx(c, t, 0, 0):][:plane]
			for i, v := range src {
				y := v*sd + mu
				if y != y { // NaN: the reference's clamp keeps it; frames must be finite
					y = 0
					w.nonFinite++
				}
				f[c*plane+i] = min(max(y, 0), 1)
			}
		}
		if err := w.emit(w.next, f); err != nil {
			return err
		}
		w.next++
	}
	return nil
}

// decodeTiled decodes a chunk of de-normalised latents with spatial tiles
// blended in pixel space; the result is raw decoder output [3][4T][H][W].
func (d *VideoDecoder) decodeTiled(ctx context.Context, z vol) (vol, error) {
	r := d.cfg.SpatialRatio()
	ts := DecodeTile(d.cfg, d.opt)
	height, width := z.h*r, z.w*r
	ys := splitTiles(height, ts, d.cfg.TileOverlapMin, r)
	xs := splitTiles(width, ts, d.cfg.TileOverlapMin, r)
	crops := make([]vol, 0, len(ys.starts)*len(xs.starts))
	for i := range ys.starts {
		for j := range xs.starts {
			crops = append(crops, z.crop(0, z.t, ys.starts[i]/r, (ys.starts[i]+ys.sizes[i])/r, xs.starts[j]/r, (xs.starts[j]+xs.sizes[j])/r))
		}
	}
	tiles, stop := d.decodeAhead(ctx, crops)
	defer stop()
	var canvas vol
	var rowTails []vol
	oy := 0
	for i := range ys.starts {
		var newTails []vol
		var leftTail *vol
		ox, th := 0, 0
		for j := range xs.starts {
			res := <-tiles
			if res.err != nil {
				return vol{}, res.err
			}
			tile := d.net.unpatchify(res.rows, res.z.t, res.z.h, res.z.w)
			if canvas.d == nil {
				canvas = newVol(tile.c, tile.t, height, width)
			}
			if i < len(ys.starts)-1 {
				newTails = append(newTails, tile.crop(0, tile.t, tile.h-ys.overlaps[i], tile.h, 0, tile.w))
			}
			var nextLeft *vol
			if j < len(xs.starts)-1 {
				t := tile.crop(0, tile.t, 0, tile.h, tile.w-xs.overlaps[j], tile.w)
				nextLeft = &t
			}
			if i > 0 {
				tile = blend(rowTails[j], tile, ys.overlaps[i-1], axisH)
			}
			if j > 0 {
				tile = blend(*leftTail, tile, xs.overlaps[j-1], axisW)
			}
			leftTail = nextLeft
			h, w := tile.h, tile.w
			if i < len(ys.starts)-1 {
				h -= ys.overlaps[i]
			}
			if j < len(xs.starts)-1 {
				w -= xs.overlaps[j]
			}
			canvas.paste(tile.crop(0, tile.t, 0, h, 0, w), 0, oy, ox)
			ox += w
			th = h
		}
		rowTails = newTails
		oy += th
	}
	return canvas, nil
}

// decodeTile runs the decoder graph on de-normalised latents [C][T][h][w]
// and un-patchifies to raw pixels [3][4T][16h][16w].
func (d *VideoDecoder) decodeTile(ctx context.Context, z vol) (vol, error) {
	rows, err := d.tileRows(ctx, z)
	if err != nil {
		return vol{}, err
	}
	return d.net.unpatchify(rows, z.t, z.h, z.w), nil
}

// tileRows runs the decoder graph on one tile's latents: its output patches.
func (d *VideoDecoder) tileRows(ctx context.Context, z vol) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g, out, tp := d.tileGraph(z)
	defer g.Free()
	if d.inspect != nil {
		d.inspect(g)
	}
	t0 := time.Now()
	if err := g.Compute(); err != nil {
		return nil, fmt.Errorf("vae: decode: %w", err)
	}
	rows := out.F32()
	d.GraphTime += time.Since(t0)
	d.Calls++
	tp.Deliver()
	return rows, nil
}

// decodedTile is one tile's decoder output, or why there is none.
type decodedTile struct {
	rows []float32
	z    vol // the tile's latents (their shape un-patchifies the rows)
	err  error
}

// decodeAhead runs the decoder graphs of crops, in order, on a goroutine
// one tile ahead of the caller, so the host's un-patchify, blend and
// paste of a tile overlap the next tile's graph (on the H200 that host
// work was half of a 1344x768x124 decode, each part after every graph).
// stop ends the goroutine and returns once it has: the decoder's weights
// may be freed right after.
func (d *VideoDecoder) decodeAhead(ctx context.Context, crops []vol) (<-chan decodedTile, func()) {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan decodedTile, 1)
	go func() {
		defer close(out)
		for _, z := range crops {
			rows, err := d.tileRows(ctx, z)  // after stop, the cancelled ctx ends it here
			out <- decodedTile{rows, z, err} // every result is taken: by the caller, or by stop
			if err != nil {
				return
			}
		}
	}()
	stop := func() {
		cancel()
		for range out { // drain until the goroutine has closed it
		}
	}
	return out, stop
}

// tileGraph builds one decoder call on de-normalised latents [C][T][h][w]
// with its inputs set: the graph, its output patches and its taps.
func (d *VideoDecoder) tileGraph(z vol) (*ggml.Graph, *ggml.Tensor, *tap.Graph) {
	n := z.t * z.h * z.w
	tokens := make([]float32, z.c*n)
	for c := range z.c {
		for i := range n {
			tokens[i*z.c+c] = z.d[c*n+i]
		}
	}
	g := d.b.NewGraph(0)
	in := g.Input("latent", ggml.F32, z.c, n)
	in.SetF32(tokens)
	s := n + decoderSuffix
	cosT := g.Input("rope.cos", ggml.F32, d.net.pairs, 1, s)
	sinT := g.Input("rope.sin", ggml.F32, d.net.pairs, 1, s)
	cos, sin := d.net.ropeTables(z.t, z.h, z.w)
	cosT.SetF32(cos)
	sinT.SetF32(sin)
	tp := tap.On(g, d.Tap)
	out := d.net.Forward(g, in, cosT, sinT, d.opt.Precision.KV, tp)
	g.Output(out)
	return g, out, tp
}

// unpatchify maps rows [(c, dt, dy, dx)] of each voxel (t, h, w) to pixels.
func (d *videoDecoder) unpatchify(rows []float32, t, h, w int) vol {
	p, pt := d.patch, d.patchT
	out := newVol(d.outCh, t*pt, h*p, w*p)
	row := d.outCh * pt * p * p
	for tok := range t * h * w {
		vt, vy, vx := tok/(h*w), tok/w%h, tok%w
		r := rows[tok*row:][:row]
		for c := range d.outCh {
			for dt := range pt {
				for dy := range p {
					dst := out.idx(c, vt*pt+dt, vy*p+dy, vx*p)
					copy(out.d[dst:dst+p], r[((c*pt+dt)*p+dy)*p:][:p])
				}
			}
		}
	}
	return out
}
