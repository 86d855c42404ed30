package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"h3studio/engine"
	"h3studio/engine/ggml"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/media"
)

// RequestError is a request that cannot be served as given: a missing or
// unreadable input, a rule of the model, a bad flag. It is reported before
// any weights load, in one sentence.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// RefusedError is a request the planner could not fit to the machine; Plan
// says why and Repair what would fit.
type RefusedError struct{ Plan *plan.Plan }

func (e *RefusedError) Error() string { return Refusal(e.Plan) }

// Preset is a named set of speed knobs; zero fields leave the request's.
type Preset struct {
	Name   string
	Steps  int
	Layers int
	Reuse  int
	// RenderScale, when set, runs the model on a canvas this fraction of
	// the output's side (h3.c's --render-width/height, 320 for 512).
	RenderScale float64
}

// Presets are the release's quality presets, slowest first. Default is
// h3.c's default; Balanced and Aggressive are h3.c's validated speed
// settings. A model that declares its own (Defaults.Presets) offers those.
var Presets = []Preset{
	{Name: "reference", Steps: 50},
	{Name: "default", Steps: 20},
	{Name: "balanced", Steps: 20, Layers: 45, Reuse: 2},
	{Name: "fast", Steps: 6},
	{Name: "aggressive", Steps: 20, Layers: 40, Reuse: 3, RenderScale: 320.0 / 512},
}

// ApplyPreset returns r with its preset, one of d.Presets, filled into
// the fields r leaves zero (explicit settings win). An unknown preset is
// an error.
func (d Defaults) ApplyPreset(r Request) (Request, error) {
	if r.Preset == "" {
		return r, nil
	}
	if strings.EqualFold(r.Preset, TurboPreset) {
		return applyTurbo(r)
	}
	for _, p := range d.Presets {
		if !strings.EqualFold(p.Name, r.Preset) {
			continue
		}
		if r.Steps == 0 {
			r.Steps = p.Steps
		}
		if r.Layers == 0 {
			r.Layers = p.Layers
		}
		if r.Reuse == 0 && r.CoreReuse == 0 {
			r.Reuse = p.Reuse
		}
		// A canvas the model refuses has no same-aspect smaller canvas
		// (500x300 would give 166x100); the planner reports the canvas
		// itself, as it does without a preset.
		c := layout.Canvas{Width: r.Width, Height: r.Height}
		if p.RenderScale > 0 && r.RenderWidth == 0 && c.ValidateModel() == nil {
			rc := layout.ScaleCanvas(c, p.RenderScale*p.RenderScale)
			r.RenderWidth, r.RenderHeight = rc.Width, rc.Height
		}
		return r, nil
	}
	names := make([]string, len(d.Presets))
	for i, p := range d.Presets {
		names[i] = p.Name
	}
	names = append(names, TurboPreset+" (with a Turbo LoRA)")
	return r, fmt.Errorf("unknown preset %q; choose %s", r.Preset, strings.Join(names, ", "))
}

// Renderer renders requests: it is the RenderFunc behind the job queue,
// the CLI and the UI. Engines are opened on first use, one per model, and
// kept, so their caches (text conditioning, reference latents) serve the
// next job.
type Renderer struct {
	// CacheDir holds the built-in models (the demo model extracted, the
	// tiny model generated), required for requests that use them.
	CacheDir string
	// DefaultModel is the model of a request that names none: "" the
	// built-in demo model (DemoModel), TinyModel for tests that need the
	// random tiny model's cost, or a snapshot folder.
	DefaultModel string
	// Threads bounds the engine's CPU threads (0: all).
	Threads int
	// Device picks the engines' ggml device (zero: the GPU when present;
	// `bench --cpu` asks for the CPU).
	Device ggml.Device
	// PlanOptions carries the backend's declarations (a Qwen sequence
	// limit); MemoryGB overrides the machine's memory budget when
	// positive. Set them before the first call; while plans and renders
	// may be running (the studio window), change the budget with
	// SetMemoryGB.
	PlanOptions plan.Options
	MemoryGB    float64
	// Preview asks for a latent preview image on every denoise step.
	Preview bool
	Logger  *slog.Logger
	// HistoryDir is the job history whose finished renders refine the
	// time estimates ("" none); the calibration lives in CacheDir.
	HistoryDir string

	mu      sync.Mutex
	engines map[string]*engine.Engine
	// budgetMu guards MemoryGB apart from mu, which is held while an
	// engine opens.
	budgetMu sync.Mutex
}

// SetMemoryGB overrides the machine's memory budget for the plans and
// renders prepared from now on (0: the machine's own budget). It is safe
// to call while other goroutines plan or render; a job already prepared
// keeps the plan it was given.
func (rd *Renderer) SetMemoryGB(gb float64) {
	rd.budgetMu.Lock()
	rd.MemoryGB = gb
	rd.budgetMu.Unlock()
}

func (rd *Renderer) memoryGB() float64 {
	rd.budgetMu.Lock()
	defer rd.budgetMu.Unlock()
	return rd.MemoryGB
}

// Close closes every engine the renderer opened.
func (rd *Renderer) Close() {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	for _, e := range rd.engines {
		e.Close()
	}
	rd.engines = nil
}

// Render is a RenderFunc: it validates and plans the request (no weights
// are read until the plan fits), runs the engine, and muxes the MP4 into a
// temporary file beside req.Output that is renamed into place only when
// everything succeeded.
func (rd *Renderer) Render(ctx context.Context, req Request, sink engine.Sink) (string, error) {
	if sink == nil {
		sink = func(engine.Event) {}
	}
	sink(engine.Event{Kind: engine.EventStart, Phase: engine.PhasePlan})
	job, err := rd.Prepare(ctx, req)
	if err != nil {
		return "", err
	}
	return job.render(ctx, sink)
}

// Render is the RenderFunc of a job already prepared, for a caller that
// plans before a job exists (the CLI refuses a bad request before it
// reaches the history): it runs the job without planning again. It takes
// only the request the job was prepared from.
func (j *Job) Render(ctx context.Context, req Request, sink engine.Sink) (string, error) {
	if !reflect.DeepEqual(req, j.asked) {
		return "", errors.New("app: a prepared job renders only the request it was prepared from")
	}
	if sink == nil {
		sink = func(engine.Event) {}
	}
	sink(engine.Event{Kind: engine.EventStart, Phase: engine.PhasePlan})
	return j.render(ctx, sink)
}

// render reports the plan (the queue records it in the history) and runs
// the job.
func (j *Job) render(ctx context.Context, sink engine.Sink) (string, error) {
	sink(engine.Event{Kind: engine.EventEnd, Phase: engine.PhasePlan, Elapsed: j.planned,
		Message: fmt.Sprintf("%s, %d DiT rows, %d Qwen tokens", j.Plan.Task, j.Plan.DiTRows.Total, j.Plan.TextTokens.Total),
		Plan:    j.Plan})
	return j.Run(ctx, sink)
}

// Job is a validated, planned request ready to run.
type Job struct {
	Request Request
	Plan    *plan.Plan
	Engine  *engine.Engine
	Stats   *engine.Stats
	preview bool
	// cacheDir keeps the fitted preview maps; log takes the warning when
	// a fit fails.
	cacheDir string
	log      *slog.Logger
	// asked is the request as given, before presets and defaults: what
	// the clip's metadata stores so a restore shows what the user chose.
	asked Request
	// planned is how long Prepare took.
	planned time.Duration
}

// Plan is the one planning path: `h3studio plan`, Prepare (the render and
// its queue) and the window's live plan all come here, so each shows the
// plan a render of the request runs. A model that names a profile rather
// than a folder (official-q4_k) is planned from the profile alone. A plan
// that does not fit comes back with its Verdict; every error is a
// *RequestError with one sentence.
func (rd *Renderer) Plan(ctx context.Context, req Request) (*plan.Plan, error) {
	job, err := rd.plan(ctx, req)
	if err != nil {
		return nil, err
	}
	return job.Plan, nil
}

// Prepare validates req, probes its inputs, opens the model (discovery
// only: no weights are read) and plans it through Plan's path. Every
// failure is a *RequestError or a *RefusedError with one sentence.
func (rd *Renderer) Prepare(ctx context.Context, req Request) (*Job, error) {
	t0 := time.Now()
	if err := checkOutput(req.Output); err != nil {
		return nil, &RequestError{err}
	}
	// The clip is muxed last: without a usable FFmpeg every minute of the
	// render before it would be lost.
	configureMedia()
	if err := media.CanEncode(ctx); err != nil {
		return nil, &RequestError{err}
	}
	job, err := rd.plan(ctx, req)
	if err != nil {
		return nil, err
	}
	if job.Engine == nil {
		return nil, &RequestError{&FlagError{Msg: fmt.Sprintf("the model %s is a weights profile, which plans but cannot render; choose a downloaded MiniMax-H3 folder, or none for the %s", req.Model, DemoModelText), Flag: "-d"}}
	}
	if job.Plan.Verdict != plan.Fits {
		return nil, &RefusedError{job.Plan}
	}
	// The clip and the history record which adapter files made it.
	if job.asked, err = withLoRADigests(job.asked); err != nil {
		return nil, &RequestError{err}
	}
	job.planned = time.Since(t0)
	return job, nil
}

// plan opens the model, applies its preset and defaults, validates, probes
// and plans req; the job's Engine is nil when the model is a profile.
func (rd *Renderer) plan(ctx context.Context, req Request) (*Job, error) {
	eng, profile, err := rd.model(req.Model)
	if err != nil {
		return nil, err
	}
	d := engineDefaults(eng)
	r, err := d.ApplyPreset(req)
	if err != nil {
		return nil, &RequestError{err}
	}
	r = r.WithModelDefaults(d)
	if err := r.Validate(); err != nil {
		return nil, &RequestError{err}
	}
	pr, err := PlanRequest(ctx, r)
	if err != nil {
		return nil, &RequestError{err}
	}
	mc, err := LookupMachine(r.Machine)
	if err != nil {
		return nil, &RequestError{err}
	}
	if gb := rd.memoryGB(); gb > 0 {
		mc = mc.WithBudgetGB(gb)
	}
	mc.Rates = rd.rates(mc.Name, r.Model)
	var p *plan.Plan
	switch {
	case eng != nil:
		p, err = eng.Plan(pr, mc, rd.PlanOptions)
	default:
		p, err = engine.PlanFor(profile, pr, mc, rd.PlanOptions)
	}
	if err != nil {
		return nil, &RequestError{nameReference(err, r.References)}
	}
	return &Job{Request: r, Plan: p, Engine: eng, preview: rd.Preview, cacheDir: rd.CacheDir, log: rd.Logger, asked: req}, nil
}

// checkOutput refuses an output path whose folder is missing or which
// names a folder, before any work is done.
func checkOutput(out string) error {
	if out == "" {
		return &FlagError{Msg: "no output file was given", Flag: "-o FILE.mp4"}
	}
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return &FlagError{Msg: fmt.Sprintf("the output %s is a folder; give a file name ending in .mp4", out), Flag: "-o"}
	}
	dir := filepath.Dir(out)
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return &FlagError{Msg: fmt.Sprintf("the output folder %s does not exist; create it or choose another", dir), Flag: "-o"}
	}
	return nil
}

// model resolves a request's model: the open engine of a snapshot folder
// or a built-in model ("" is DefaultModel), or a named profile
// (plan.ModelNames) to plan without weights.
func (rd *Renderer) model(name string) (*engine.Engine, plan.Model, error) {
	name = rd.resolveModel(name)
	if name != TinyModel && slices.Contains(plan.ModelNames, name) {
		m, err := plan.LookupModel(name)
		if err != nil {
			return nil, plan.Model{}, &RequestError{err}
		}
		return nil, m, nil
	}
	e, err := rd.engine(name)
	return e, plan.Model{}, err
}

// engine returns the open engine of a resolved model (a folder or a
// built-in model), opening it on first use.
func (rd *Renderer) engine(model string) (*engine.Engine, error) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if e, ok := rd.engines[model]; ok {
		return e, nil
	}
	dir, err := rd.modelDir(model)
	if err != nil {
		return nil, err
	}
	e, err := engine.Open(dir, engine.Options{Threads: rd.Threads, Device: rd.Device, Logger: rd.Logger})
	if err != nil {
		return nil, &RequestError{err}
	}
	if rd.engines == nil {
		rd.engines = map[string]*engine.Engine{}
	}
	rd.engines[model] = e
	return e, nil
}

// modelDir is the snapshot folder of a request's model ("" is
// DefaultModel): a built-in model's under the cache (written on first
// use), else the folder itself once it checks out.
func (rd *Renderer) modelDir(model string) (string, error) {
	model = rd.resolveModel(model)
	if dir, ok, err := builtInDir(model, rd.CacheDir); ok {
		return dir, err
	}
	return model, CheckModelFolder(model)
}

// Run generates the job's clip and muxes it into its output file.
func (j *Job) Run(ctx context.Context, sink engine.Sink) (string, error) {
	if sink == nil {
		sink = func(engine.Event) {}
	}
	r := j.Request
	out := &mp4Output{ctx: ctx, dst: r.Output, framesDir: r.FramesDir, metadata: clipMetadata(j.asked),
		canvas: layout.Canvas{Width: r.Width, Height: r.Height}}
	defer out.abort()
	er := engine.Request{Seed: r.Seed, Preview: j.preview, Media: MediaReader{}, Output: out}
	if j.preview {
		er.PreviewMap = j.jobPreviewMap(ctx, sink)
	}
	st, err := j.Engine.Generate(ctx, er, j.Plan, sink)
	if err != nil {
		return "", err
	}
	t0 := time.Now()
	sink(engine.Event{Kind: engine.EventStart, Phase: engine.PhaseMux})
	if err := out.close(); err != nil {
		if ctx.Err() != nil {
			return "", engine.ErrCanceled
		}
		return "", err
	}
	el := time.Since(t0)
	st.Phases = append(st.Phases, engine.PhaseTime{Phase: engine.PhaseMux, Elapsed: el})
	j.Stats = st
	sink(engine.Event{Kind: engine.EventEnd, Phase: engine.PhaseMux, Elapsed: el})
	return r.Output, nil
}

// MediaReader is the engine's MediaReader over package media (the one
// the app renders with; the engine's end-to-end parity test uses it too).
type MediaReader struct{}

func (MediaReader) Image(ctx context.Context, path string, w, h int, fit engine.Fit) (engine.Pixels, error) {
	configureMedia()
	pol := media.Stretch
	if fit == engine.FitCover {
		pol = media.Cover
	}
	f, err := media.LoadImage(path, w, h, pol)
	if err != nil {
		// A file can change between the plan that checked it and the
		// render; its failure is still about the user's file.
		return engine.Pixels{}, &FileError{path, err}
	}
	return engine.Pixels{Width: f.Width, Height: f.Height, RGB: f.Pix}, nil
}

func (MediaReader) Video(ctx context.Context, path string, w, h, maxFrames int, fn func(int, engine.Pixels) error) (int, error) {
	configureMedia()
	var fnErr error // the engine's own failure, which is not about the file
	n, err := media.DecodeVideo(ctx, path, media.VideoOptions{Width: w, Height: h, Policy: media.Stretch, MaxFrames: maxFrames},
		func(i int, f media.Frame) error {
			fnErr = fn(i, engine.Pixels{Width: f.Width, Height: f.Height, RGB: f.Pix})
			return fnErr
		})
	if err != nil && fnErr == nil && ctx.Err() == nil {
		return n, &FileError{path, err}
	}
	return n, err
}

func (MediaReader) Audio(ctx context.Context, path string, maxSeconds float64) (engine.Audio, error) {
	configureMedia()
	pcm, err := media.DecodeAudio(ctx, path, media.AudioOptions{MaxDuration: time.Duration(maxSeconds * float64(time.Second))})
	if err != nil && ctx.Err() == nil {
		return engine.Audio{}, &FileError{path, err}
	} else if err != nil {
		return engine.Audio{}, err
	}
	if pcm.Rate != media.SampleRate || pcm.Channels != media.Channels {
		return engine.Audio{}, fmt.Errorf("media: %s decoded as %d Hz x %d channels, want 32 kHz stereo", path, pcm.Rate, pcm.Channels)
	}
	return engine.Audio{Samples: pcm.Samples}, nil
}

// mp4Output streams the engine's frames into an MP4Writer, scaling them to
// the output canvas when the model ran on a smaller one.
type mp4Output struct {
	ctx       context.Context
	dst       string
	framesDir string
	metadata  map[string]string
	canvas    layout.Canvas
	w         *media.MP4Writer
	closed    bool
}

func (o *mp4Output) Begin(width, height, frames int, audio engine.Audio) error {
	configureMedia()
	w, err := media.CreateMP4(o.ctx, o.dst, media.EncodeOptions{
		Width: o.canvas.Width, Height: o.canvas.Height, FPS: layout.FPS, FramesDir: o.framesDir,
		Metadata: o.metadata,
		Audio:    media.PCM{Rate: media.SampleRate, Channels: media.Channels, Samples: audio.Samples},
	})
	if err != nil {
		return err
	}
	o.w = w
	return nil
}

func (o *mp4Output) Frame(i int, p engine.Pixels) error {
	f := media.Frame{Width: p.Width, Height: p.Height, Pix: p.RGB}
	if p.Width != o.canvas.Width || p.Height != o.canvas.Height {
		img, err := media.Resize(f.Image(), o.canvas.Width, o.canvas.Height, media.Stretch)
		if err != nil {
			return err
		}
		f = media.FrameFromImage(img)
	}
	return o.w.WriteFrame(f)
}

func (o *mp4Output) close() error {
	if o.w == nil {
		return errors.New("app: the engine produced no frames")
	}
	o.closed = true
	return o.w.Close()
}

// abort removes the temporary file unless close ran.
func (o *mp4Output) abort() {
	if o.w != nil && !o.closed {
		o.w.Abort()
	}
}
