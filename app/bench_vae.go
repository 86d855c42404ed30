package app

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"h3studio/engine"
	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/engine/vae"
	"h3studio/engine/weights"
)

// vaeBenchPrompt is the prompt the planner lays the bench's T2VA request
// out with (tools/gpu/run.sh plans the DiT geometries with the same).
const vaeBenchPrompt = "a red fox running through snow at dawn"

// vaeBench is the --vae part of `h3studio bench`: the video VAE decoder
// with seeded synthetic weights generated on the device, decoding a
// seeded latent of each geometry through the production decode with the
// tiling the planner picks for that canvas on this machine.
type vaeBench struct {
	geoms []layout.Spec
	dt    ggml.DType
	tiny  bool    // --vae-config tiny: the tiny model's decoder and profile
	memGB float64 // --vae-memory-gb: the planner's budget (0: this machine's)
}

// vaeFlags registers the --vae flags on fs; the returned function reads
// them after parsing (nil without --vae).
func vaeFlags(fs *flag.FlagSet) func() (*vaeBench, error) {
	geoms := fs.String("vae", "", "also time the video VAE decode (seeded synthetic weights, the planner's tiling) at these geometries, e.g. 1344x768x124")
	dtype := fs.String("vae-weights", "f32", "weight type of the --vae decoder's matrices: f32 (the official checkpoint) or f16 (ComfyUI's)")
	config := fs.String("vae-config", "release", "the --vae decoder: release or tiny (the embedded tiny model's)")
	memGB := fs.Float64("vae-memory-gb", 0, "the memory budget the --vae geometries are planned under (0: this machine's)")
	return func() (*vaeBench, error) {
		if *geoms == "" {
			return nil, nil
		}
		return parseVAEBench(*geoms, *dtype, *config, *memGB)
	}
}

// parseVAEBench reads --vae ("1344x768x124"), --vae-weights (f32, as the
// official checkpoint stores the decoder, or f16, as ComfyUI's repack
// does) and --vae-config (release or tiny).
func parseVAEBench(geoms, dtype, config string, memGB float64) (*vaeBench, error) {
	specs, err := parseGeometries("--vae", geoms)
	if err != nil {
		return nil, err
	}
	vb := &vaeBench{geoms: specs, memGB: memGB}
	switch strings.ToLower(dtype) {
	case "f32":
		vb.dt = ggml.F32
	case "f16":
		vb.dt = ggml.F16
	default:
		return nil, &UsageError{Msg: fmt.Sprintf("--vae-weights: %q is not f32 or f16", dtype)}
	}
	switch config {
	case "release":
	case "tiny":
		vb.tiny = true
	default:
		return nil, &UsageError{Msg: fmt.Sprintf("--vae-config: %q is not release or tiny", config)}
	}
	if memGB < 0 {
		return nil, &UsageError{Msg: "--vae-memory-gb must not be negative"}
	}
	return vb, nil
}

// model is the decoder's config and the planner's profile of the same
// model, its video VAE at the bench's weight type.
func (vb *vaeBench) model() (*vae.VideoConfig, plan.Model, error) {
	cfg, name := arch.TinyVideoVAE(), "tiny"
	if !vb.tiny {
		var err error
		if cfg, err = arch.ReleaseVideoVAE(); err != nil {
			return nil, plan.Model{}, err
		}
		name = "official-bf16"
	}
	m, err := plan.LookupModel(name)
	if err != nil {
		return nil, plan.Model{}, err
	}
	m.VAEBPP = float64(vb.dt.BlockBytes())
	return cfg, m, nil
}

// plan is the planner's plan of a T2VA request of geometry s on this
// machine (or under --vae-memory-gb): the decoder's options come from it.
// The decode itself runs at the geometry asked for, even where the
// fitter would render smaller, so the figure is the canvas named.
func (vb *vaeBench) plan(m plan.Model, s layout.Spec) (*plan.Plan, error) {
	mc, err := LookupMachine("auto")
	if err != nil {
		return nil, err
	}
	if vb.memGB > 0 {
		mc = mc.WithBudgetGB(vb.memGB)
	}
	p, err := engine.PlanFor(m, plan.Request{Canvas: s.Canvas, Frames: s.Frames, Prompt: vaeBenchPrompt}, mc, plan.Options{})
	if err != nil {
		return nil, &UsageError{Msg: fmt.Sprintf("--vae %dx%dx%d: %v", s.Canvas.Width, s.Canvas.Height, s.Frames, err)}
	}
	return p, nil
}

// run decodes every geometry once after a one-call warm-up (cuBLAS and
// the allocator initialised outside the timing, at a full call's size), with a decoder placed
// per geometry: its plan decides the options (engine.VideoDecodeOptions,
// as Generate decodes).
func (vb *vaeBench) run(ctx context.Context, b *ggml.Backend, emit func(benchResult) error) error {
	cfg, m, err := vb.model()
	if err != nil {
		return err
	}
	for _, s := range vb.geoms {
		if err := ctx.Err(); err != nil {
			return err
		}
		l, err := layout.Build(s)
		if err != nil {
			return &UsageError{Msg: fmt.Sprintf("--vae %dx%dx%d: %v", s.Canvas.Width, s.Canvas.Height, s.Frames, err)}
		}
		p, err := vb.plan(m, s)
		if err != nil {
			return err
		}
		r, err := vb.decode(ctx, b, cfg, l, engine.VideoDecodeOptions(p, ggml.Precision{}))
		if err != nil {
			return err
		}
		r.Residency = string(p.Residency.VAEDecoder)
		r.PlannedWorkBytes = m.Dims.VideoDecodeBytes(l.Canvas)
		r.Name = fmt.Sprintf("vae decode %dx%dx%d, %s weights, %d-px tiles", s.Canvas.Width, s.Canvas.Height, s.Frames, vb.dt, r.TilePx)
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

// decode places the decoder with options o and times one decode of l's
// target latent, sampling the device's memory throughout.
func (vb *vaeBench) decode(ctx context.Context, b *ggml.Backend, cfg *vae.VideoConfig, l *layout.Layout, o vae.DecodeOptions) (benchResult, error) {
	db, err := vae.NewDecodeBench(b, cfg, vb.dt, 1, o)
	if err != nil {
		return benchResult{}, err
	}
	defer db.Close()
	// The weights are placed; what the device holds beyond this is the
	// decode's working memory (compute buffers, ggml-cuda's pool).
	free0, total := b.DeviceMemory()
	base := total - free0
	t, h, w := l.LatentFrames, l.Canvas.LatentH(), l.Canvas.LatentW()
	if err := db.Warm(ctx); err != nil {
		return benchResult{}, err
	}
	call, err := db.CallMemory()
	if err != nil {
		return benchResult{}, err
	}
	stop := watchDevice(b)
	d, err := db.Run(ctx, t, h, w)
	high := stop()
	if err != nil {
		return benchResult{}, err
	}
	ms, _ := weights.ReadMemStat() // PeakRSS stays 0 where unknown
	r := benchResult{
		GFLOPS: db.Flops(t, h, w) / d.Seconds() / 1e9, Seconds: d.Seconds(), DType: vb.dt.String(),
		WeightBytes: int64(db.Bytes()), DeviceUsedBytes: int64(high), HostPeakBytes: ms.PeakRSS, Splits: b.Splits(),
		TilePx: db.Tile(), DecodeCalls: db.Calls(), Frames: db.Frames(t), DecodeBudgetBytes: db.Options().MemoryBudget,
		GraphSeconds: db.GraphTime().Seconds(), CallBufferBytes: int64(call.Device),
	}
	if high > base {
		r.ComputeBytes = int64(high - base)
	}
	return r, nil
}
