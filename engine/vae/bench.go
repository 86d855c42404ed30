package vae

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// DecodeBench runs the production video decode (VideoDecoder.Decode:
// temporal chunks, spatial tiles of DecodeTile's size blended in pixel
// space, every frame de-normalised on the host) over seeded synthetic
// weights generated on the device (ggml.WeightSet.FillSeeded): the
// release decoder (2.4 B parameters, 9.7 GB in f32) at 1344x768x124
// without its checkpoint.
type DecodeBench struct {
	d  *VideoDecoder
	ws *ggml.WeightSet
}

// NewDecodeBench places the decoder of cfg with its matrices stored as dt
// (F32 as the official checkpoint stores them, or F16 as ComfyUI's repack
// does; everything else F32, as LoadVideoDecoder keeps it), drawn as
// tools/fixtures/vae/gen.py draws them (norm gains 1 ± 0.1, biases ± 0.05,
// residual scales 0.4 ± 0.1, matrices with std 1/√fan_in), seeded by seed.
// o applies as it does to LoadVideoDecoder; its Precision.Weights is dt.
func NewDecodeBench(b *ggml.Backend, cfg *VideoConfig, dt ggml.DType, seed uint64, o DecodeOptions) (*DecodeBench, error) {
	if dt != ggml.F32 && dt != ggml.F16 {
		return nil, fmt.Errorf("vae: decode bench: weights as %s, want f32 or f16", dt)
	}
	o.Precision.Weights = ggml.StoreAs(dt)
	if err := o.Precision.Check("vae", ggml.F32, ggml.F16); err != nil {
		return nil, err
	}
	net := newVideoDecoder(cfg)
	slots, err := weights.Slots("", net, nil)
	if err != nil {
		return nil, fmt.Errorf("vae: decode bench: %w", err)
	}
	ws := b.NewWeightSet(len(slots))
	inits := map[*ggml.Tensor]ggml.Init{}
	for _, s := range slots {
		t := ggml.F32
		if s.Rank == 2 { // loadNet's rule: checkpoint matrices are the matmul weights
			t = dt
		}
		inits[ws.Add(s.Name, t, s.Shape...)] = benchInit(s)
	}
	if err := ws.Alloc(); err != nil {
		ws.Free()
		return nil, fmt.Errorf("vae: decode bench: %w", err)
	}
	err = ws.FillSeeded(seed, func(t *ggml.Tensor) ggml.Init { return inits[t] })
	if err == nil {
		err = weights.Bind(ws, "", net)
	}
	if err != nil {
		ws.Free()
		return nil, fmt.Errorf("vae: decode bench: %w", err)
	}
	d := &VideoDecoder{cfg: cfg, b: b, ws: weights.ModuleOf(ws), net: net, opt: o}
	return &DecodeBench{d: d, ws: ws}, nil
}

// benchInit is gen.py's init_video distribution for one weight.
func benchInit(s weights.Slot) ggml.Init {
	switch {
	case strings.HasSuffix(s.Name, "norm1.weight"), strings.HasSuffix(s.Name, "norm2.weight"), strings.HasSuffix(s.Name, "norm_out.weight"):
		return ggml.Init{Mean: 1, Std: 0.1}
	case strings.HasSuffix(s.Name, "bias"):
		return ggml.Init{Std: 0.05}
	case strings.HasSuffix(s.Name, "scale1"), strings.HasSuffix(s.Name, "scale2"):
		return ggml.Init{Mean: 0.4, Std: 0.1}
	case strings.HasSuffix(s.Name, "register_tokens"):
		return ggml.Init{Std: 1}
	}
	return ggml.Init{Std: float32(1 / math.Sqrt(float64(s.Shape[0])))} // ggml's ne0 is fan_in
}

// Close frees the weights.
func (db *DecodeBench) Close() { db.ws.Free() }

// Bytes is the decoder's weight memory.
func (db *DecodeBench) Bytes() int { return db.ws.Size() }

// Tile is the spatial tile (pixels) the decode runs with: DecodeTile
// under the bench's options.
func (db *DecodeBench) Tile() int { return DecodeTile(db.d.cfg, db.d.opt) }

// Options are the decode options in force (Precision.Weights is the
// bench's weight type).
func (db *DecodeBench) Options() DecodeOptions { return db.d.opt }

// Calls is how many decoder graphs the last Run ran (chunks x tiles).
func (db *DecodeBench) Calls() int { return db.d.Calls }

// GraphTime is the last Run's time in those graphs (compute and read-back).
func (db *DecodeBench) GraphTime() time.Duration { return db.d.GraphTime }

// Frames is how many frames a latent of t steps decodes to.
func (db *DecodeBench) Frames(t int) int { return db.d.Frames(t) }

// Warm decodes one full chunk of one tile, so the first timed call finds
// the backend's buffers and kernels as every later call does.
func (db *DecodeBench) Warm(ctx context.Context) error {
	p := newTemporalPlan(2, db.d.cfg)
	cells := db.Tile() / db.d.cfg.SpatialRatio()
	_, err := db.Run(ctx, p.chunkTokens+p.overlapTokens, cells, cells)
	return err
}

// CallMemory is the compute buffers ggml's scheduler reserves for one
// decoder call of a full chunk on one tile (weights not included), what
// the planner's VideoDecodeBytes predicts; nothing is computed.
func (db *DecodeBench) CallMemory() (ggml.Memory, error) {
	p := newTemporalPlan(2, db.d.cfg)
	cells := db.Tile() / db.d.cfg.SpatialRatio()
	g, _, _ := db.d.tileGraph(newVol(db.d.cfg.LatentChannels, p.chunkTokens+p.overlapTokens, cells, cells))
	defer g.Free()
	return g.Measure()
}

// Run decodes a seeded unit-normal latent of t x h x w cells through
// Decode, frames discarded as they come, and returns the wall time.
func (db *DecodeBench) Run(ctx context.Context, t, h, w int) (time.Duration, error) {
	c := db.d.cfg.LatentChannels
	if t < 1 || h < 1 || w < 1 {
		return 0, fmt.Errorf("vae: decode bench: latent %dx%dx%d", t, h, w)
	}
	r := rand.New(rand.NewPCG(5, 5))
	z := Latent{C: c, T: t, H: h, W: w, Data: make([]float32, c*t*h*w)}
	for i := range z.Data {
		z.Data[i] = float32(r.NormFloat64())
	}
	db.d.Calls, db.d.GraphTime = 0, 0
	start := time.Now()
	err := db.d.Decode(ctx, z, func(int, []float32) error { return nil })
	return time.Since(start), err
}

// Flops is the multiply-adds x2 of decoding a t x h x w latent: every
// call's linears (post_quant_conv, embedding, per block QKV, output, the
// FFN's two, the head) and attention (QKᵀ and the value product), over
// the calls Decode makes (its temporal plan and tiles).
func (db *DecodeBench) Flops(t, h, w int) float64 {
	cfg := db.d.cfg
	r := cfg.SpatialRatio()
	steps := []int{t} // an image is one call per tile
	if t > 1 {
		p := newTemporalPlan(t, cfg)
		steps = steps[:0]
		for i := range p.chunks {
			start := i * p.chunkTokens
			steps = append(steps, min(start+p.chunkTokens+p.overlapTokens, t+p.padTokens)-start)
		}
	}
	ts := DecodeTile(cfg, db.d.opt)
	ys, xs := splitTiles(h*r, ts, cfg.TileOverlapMin, r), splitTiles(w*r, ts, cfg.TileOverlapMin, r)
	dim, inner := float64(cfg.Dim()), float64(ffnMult*cfg.Dim())
	z, patch := float64(cfg.LatentChannels), float64(db.d.net.outCh*db.d.net.patchT*r*r)
	var total float64
	for _, st := range steps {
		for _, th := range ys.sizes {
			for _, tw := range xs.sizes {
				n := float64(st * (th / r) * (tw / r))
				s := n + decoderSuffix
				block := 2*s*(4*dim*dim+3*dim*inner) + 4*s*s*dim
				total += 2*n*(z*z+z*dim+dim*patch) + float64(len(db.d.net.Blocks))*block
			}
		}
	}
	return total
}
