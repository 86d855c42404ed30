package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"h3studio/engine"
	"h3studio/engine/ggml"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/engine/weights"
)

// renderBenchSeed seeds the synthetic weights and the render's noise.
const renderBenchSeed = 1

// renderBench is the --render part of `h3studio bench`: one whole T2VA
// render per geometry through the renderer the CLI and the window use
// (Prepare, then Job.Run: Qwen prefill, the DiT's steps, the audio and
// video VAE decodes with the planner's tiling, the MP4 mux into a
// temporary file), over a synthetic snapshot (weights.WriteSynthetic)
// whose weights are generated where they live, so a release-size render
// needs no checkpoint and writes under a megabyte of manifests.
type renderBench struct {
	geoms  []layout.Spec
	steps  int
	config weights.SyntheticConfig
	device ggml.Device
}

// renderFlags registers the --render flags on fs; the returned function
// reads them after parsing (nil without --render).
func renderFlags(fs *flag.FlagSet) func() (*renderBench, error) {
	geoms := fs.String("render", "", "also time one whole T2VA render (seeded synthetic weights in the release's dtypes, the engine's own Generate and mux) at these geometries, e.g. 864x480x56")
	steps := fs.Int("render-steps", 20, "denoise steps of each --render")
	config := fs.String("render-config", "release", "the --render model: release or tiny (the tiny model's configs)")
	return func() (*renderBench, error) {
		if *geoms == "" {
			return nil, nil
		}
		specs, err := parseGeometries("--render", *geoms)
		if err != nil {
			return nil, err
		}
		rb := &renderBench{geoms: specs, steps: *steps}
		switch *config {
		case "release":
			rb.config = weights.SyntheticRelease
		case "tiny":
			rb.config = weights.SyntheticTiny
		default:
			return nil, &UsageError{Msg: fmt.Sprintf("--render-config: %q is not release or tiny", *config)}
		}
		if *steps < 1 {
			return nil, &UsageError{Msg: "--render-steps must be at least 1"}
		}
		return rb, nil
	}
}

// configName is how results name the model.
func (rb *renderBench) configName() string {
	if rb.config == weights.SyntheticTiny {
		return "tiny"
	}
	return "release"
}

// run renders every geometry once, each in its own temporary folder
// (snapshot manifests, cache and clip), removed when it is done.
func (rb *renderBench) run(ctx context.Context, emit func(benchResult) error) error {
	for _, s := range rb.geoms {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := rb.renderOne(ctx, s)
		if err != nil {
			return err
		}
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

func (rb *renderBench) renderOne(ctx context.Context, s layout.Spec) (benchResult, error) {
	tmp, err := os.MkdirTemp("", "h3studio-bench-render-")
	if err != nil {
		return benchResult{}, err
	}
	defer os.RemoveAll(tmp)
	snap := filepath.Join(tmp, "model")
	if err := weights.WriteSynthetic(snap, weights.SyntheticOptions{Config: rb.config, Seed: renderBenchSeed}); err != nil {
		return benchResult{}, err
	}
	rd := &Renderer{CacheDir: filepath.Join(tmp, "cache"), DefaultModel: snap, Device: rb.device,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	defer rd.Close()
	req := Request{Prompt: vaeBenchPrompt, Width: s.Canvas.Width, Height: s.Canvas.Height, Frames: s.Frames,
		Steps: rb.steps, Seed: renderBenchSeed, Output: filepath.Join(tmp, "render.mp4")}
	job, err := rd.Prepare(ctx, req)
	if err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			return benchResult{}, &UsageError{Msg: fmt.Sprintf("--render %dx%dx%d: %s", s.Canvas.Width, s.Canvas.Height, s.Frames, Refusal(refused.Plan))}
		}
		return benchResult{}, err
	}
	w := watchPhases(rd)
	t0 := time.Now()
	_, err = job.Run(ctx, w.sink)
	wall := time.Since(t0)
	peaks := w.stop()
	if err != nil {
		return benchResult{}, err
	}
	return renderResult(job, wall, peaks, rb), nil
}

// renderResult is one render's line: per phase the engine's wall time
// (Stats.Phases, the mux's from Job.Run), the high-water marks sampled
// while it ran and the planner's peak for it; the engine's timed stages
// inside the phases (Stats.Parts) beside them.
func renderResult(job *Job, wall time.Duration, peaks map[engine.Phase]MemoryUse, rb *renderBench) benchResult {
	st, p := job.Stats, job.Plan
	r := benchResult{
		Name: fmt.Sprintf("render %dx%dx%d, %d steps, %s synthetic weights", p.RenderCanvas.Width, p.RenderCanvas.Height,
			p.Frames, rb.steps, rb.configName()),
		Seconds: wall.Seconds(), Rows: st.Rows, Frames: st.Frames, Steps: rb.steps, HostPeakBytes: st.PeakBytes,
		PlannedPeakBytes: p.Memory.PeakBytes, Residency: fmt.Sprintf("dit %s, qwen %s, vae %s", p.Residency.DiT,
			p.Residency.TextEncoder, p.Residency.VAEDecoder),
	}
	planned := map[string]int64{}
	for _, ph := range p.Memory.Phases {
		planned[ph.Name] = ph.PeakBytes
	}
	for _, ph := range st.Phases {
		m := peaks[ph.Phase]
		r.Phases = append(r.Phases, renderPhase{Name: string(ph.Phase), Seconds: ph.Elapsed.Seconds(),
			PlannedPeakBytes: planned[renderPlanPhase[ph.Phase]], DevicePeakBytes: m.Device, HostPeakBytes: m.Resident})
		r.DeviceUsedBytes = max(r.DeviceUsedBytes, m.Device)
	}
	for _, pt := range st.Parts {
		r.Parts = append(r.Parts, renderPart{Name: string(pt.Phase), Seconds: pt.Elapsed.Seconds()})
	}
	return r
}

// renderPlanPhase is the planner's memory phase of each engine phase.
var renderPlanPhase = map[engine.Phase]string{
	engine.PhaseReferences: plan.PhaseReference, engine.PhaseEncode: plan.PhaseText,
	engine.PhaseDenoise: plan.PhaseDenoise, engine.PhaseDecode: plan.PhaseDecode, engine.PhaseMux: plan.PhaseMux,
}

// renderPhase is one phase of a --render result.
type renderPhase struct {
	Name             string  `json:"name"`
	Seconds          float64 `json:"seconds"`
	PlannedPeakBytes int64   `json:"planned_peak_bytes"`
	DevicePeakBytes  int64   `json:"device_peak_bytes"` // 0 on the CPU
	HostPeakBytes    int64   `json:"host_peak_bytes"`
}

// renderPart is one of the engine's timed stages inside a phase.
type renderPart struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// phaseWatch samples the renderer's memory every 5 ms, and at every
// phase's start and end, and keeps each phase's high-water mark, the
// phase being the last one the render's events started.
type phaseWatch struct {
	rd    *Renderer
	mu    sync.Mutex
	phase engine.Phase
	peaks map[engine.Phase]MemoryUse
	done  chan struct{}
	wg    sync.WaitGroup
}

func watchPhases(rd *Renderer) *phaseWatch {
	w := &phaseWatch{rd: rd, peaks: map[engine.Phase]MemoryUse{}, done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			w.sample(rd.MemoryNow())
			select {
			case <-w.done:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *phaseWatch) sample(u MemoryUse) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.phase == "" {
		return
	}
	m := w.peaks[w.phase]
	w.peaks[w.phase] = MemoryUse{Resident: max(m.Resident, u.Resident), Device: max(m.Device, u.Device)}
}

// sink follows the render's phases (its events reach it on the render's
// goroutine).
func (w *phaseWatch) sink(ev engine.Event) {
	if (ev.Kind != engine.EventStart && ev.Kind != engine.EventEnd) || ev.Phase == engine.PhasePlan {
		return
	}
	if ev.Kind == engine.EventStart {
		w.mu.Lock()
		w.phase = ev.Phase
		w.mu.Unlock()
	}
	w.sample(w.rd.MemoryNow())
}

// stop ends the sampling and returns every phase's high-water mark.
func (w *phaseWatch) stop() map[engine.Phase]MemoryUse {
	close(w.done)
	w.wg.Wait()
	return w.peaks
}

// renderLine is a --render result as a line of text: the wall time, each
// phase's seconds and peaks against the plan's, and the process's peak.
func renderLine(r benchResult) string {
	line := fmt.Sprintf("%-36s %7.3f s  %d rows, %d frames", r.Name, r.Seconds, r.Rows, r.Frames)
	for _, ph := range r.Phases {
		line += fmt.Sprintf("; %s %.3f s, planned %s, host %s", ph.Name, ph.Seconds, GBText(ph.PlannedPeakBytes), GBText(ph.HostPeakBytes))
		if ph.DevicePeakBytes > 0 {
			line += fmt.Sprintf(", device %s", GBText(ph.DevicePeakBytes))
		}
	}
	return line + fmt.Sprintf("; process peak %s, planned peak %s", GBText(r.HostPeakBytes), GBText(r.PlannedPeakBytes))
}
