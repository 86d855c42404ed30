package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"h3studio/engine/ggml"
	"h3studio/engine/plan"
	"h3studio/engine/preview"
	"h3studio/engine/vae"
	"h3studio/engine/weights"
)

// Pixels is one picture as packed 8-bit RGB: row-major, 3 bytes a pixel,
// no row padding (the layout FFmpeg's rgb24 pipes carry).
type Pixels struct {
	Width, Height int
	RGB           []byte
}

// Audio is interleaved stereo float32 at 32 kHz (L0 R0 L1 R1 ...) in
// [-1, 1], the audio VAE's rate.
type Audio struct {
	Samples []float32
}

// Frames is the number of sample frames (samples per channel).
func (a Audio) Frames() int { return len(a.Samples) / 2 }

// Fit says how a still is brought to its canvas.
type Fit int

const (
	// FitStretch scales to exactly the canvas (the release's first frame
	// and reference images, whose canvases keep the source's aspect).
	FitStretch Fit = iota
	// FitCover scales until the canvas is covered and crops the overflow
	// equally from both sides (the release's last frame).
	FitCover
)

// MediaReader decodes reference media. The app implements it with package
// media (FFmpeg children, Go image decoders); the engine never runs FFmpeg.
type MediaReader interface {
	// Image decodes a still, upright, on exactly a width x height canvas.
	Image(ctx context.Context, path string, width, height int, fit Fit) (Pixels, error)
	// Video calls fn with the clip's first maxFrames frames at 24 fps,
	// stretched to width x height, in order; fn's Pixels is reused after
	// fn returns. It returns the number of frames delivered.
	Video(ctx context.Context, path string, width, height, maxFrames int, fn func(i int, p Pixels) error) (int, error)
	// Audio decodes the first audio stream of path (an audio file or a
	// clip's soundtrack) as 32 kHz stereo, at most maxSeconds long.
	Audio(ctx context.Context, path string, maxSeconds float64) (Audio, error)
}

// Output receives the generated clip: the soundtrack first, then every
// frame in order, so a muxer can stream both without staging raw video.
// Frames are on the plan's render canvas; the caller scales them to the
// output canvas when the two differ.
type Output interface {
	Begin(width, height, frames int, audio Audio) error
	Frame(i int, p Pixels) error
}

// Request is what Generate adds to a plan: the seed and where media comes
// from and goes to. What to make (prompt, canvas, inputs, sampler knobs)
// is the plan's Request, counted and fitted by Plan.
type Request struct {
	Seed int64
	// Preview asks for a picture of the latent on every denoise step:
	// through PreviewMap (FitPreview's map for this VAE) when set, else in
	// false colour (sampler.PreviewImage), which needs no fit.
	Preview    bool
	PreviewMap *preview.Map
	Media      MediaReader
	Output     Output
}

// Generate runs a fitted plan from Plan, which holds what to make
// (p.Request: prompt, inputs, knobs), with r's seed and media I/O:
// reference decode and VAE encode, Qwen text and vision encoding, the DiT
// denoise loop, and the VAE decode into r.Output. Each phase loads its weights and releases them before the next.
// ctx is checked before every phase, every denoise step and every decoded
// frame; a canceled run returns ErrCanceled having called nothing on the
// output after the cancel. The same request and seed give the same frames
// bit for bit.
func (e *Engine) Generate(ctx context.Context, r Request, p *plan.Plan, sink Sink) (*Stats, error) {
	if err := e.check(r, p); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.backend == nil {
		return nil, errors.New("engine: closed")
	}
	defer releaseFreed()
	if sink == nil {
		sink = func(Event) {}
	}
	g := &generation{e: e, req: r, plan: p, part: e.partition(p.Partition), sink: sink, start: time.Now()}
	for _, d := range p.Decisions {
		sink(Event{Kind: EventDecision, Phase: PhasePlan, Message: fmt.Sprintf("%s (%s): %s", d.Kind, d.Target, d.Reason)})
	}
	for _, w := range p.Warnings {
		sink(Event{Kind: EventWarning, Phase: PhasePlan, Message: w})
	}
	for _, ph := range []struct {
		name Phase
		run  func(context.Context) error
	}{
		{PhaseReferences, g.references},
		{PhaseEncode, g.encode},
		{PhaseDenoise, g.denoise},
		{PhaseDecode, g.decode},
	} {
		if err := g.phase(ctx, ph.name, ph.run); err != nil {
			return nil, err
		}
	}
	st := g.stats()
	sink(Event{Kind: EventDone, Phase: PhaseDone, Elapsed: st.Total, Stats: st})
	return st, nil
}

// releaseFreed gives the memory a render freed back to the system when it
// ends, so a queue of renders stays flat: C buffers (ReleaseFreedHeap says
// why glibc keeps them) and the Go heap, which otherwise holds up to twice
// the render's live data as garbage until the next collection.
func releaseFreed() {
	debug.FreeOSMemory()
	ggml.ReleaseFreedHeap()
}

// tap hands an intermediate to the engine's test tap, if any.
func (g *generation) tap(name string, index int, v any) {
	if g.e.tap != nil {
		g.e.tap(name, index, v)
	}
}

// check validates what only Generate sees: that the plan is a fitted one
// of this snapshot and that the media I/O it needs is there. What the plan
// holds (inputs, knobs, partition contents) was checked by Plan.
func (e *Engine) check(r Request, p *plan.Plan) error {
	switch {
	case p == nil || p.Layout == nil:
		return errors.New("engine: Generate needs a plan from Engine.Plan")
	case p.Verdict != plan.Fits:
		return fmt.Errorf("engine: the plan was refused: %s", p.Error)
	case e.partition(p.Partition) == nil:
		return fmt.Errorf("engine: the plan is for the %s partition, which the snapshot at %s lacks", p.Partition, e.snap.Root)
	}
	var errs []error
	want := p.Request
	if r.Media == nil && (len(want.Refs) > 0 || want.First != "" || want.Last != "") {
		errs = append(errs, errors.New("engine: the plan has references but the request no MediaReader"))
	}
	if r.Output == nil {
		errs = append(errs, errors.New("engine: the request has no Output"))
	}
	return errors.Join(errs...)
}

// checkPartition reports what the named partition lacks for a render.
func (e *Engine) checkPartition(name string) error {
	part := e.partition(name)
	if part == nil {
		return fmt.Errorf("engine: the snapshot at %s has no %s partition", e.snap.Root, name)
	}
	var errs []error
	for _, comp := range []string{weights.Transformer, weights.TextEncoder, weights.VideoVAE, weights.AudioVAE} {
		switch c := part.Component(comp); {
		case c == nil:
			errs = append(errs, fmt.Errorf("engine: the %s partition has no %s", part.Name, comp))
		case c.Config == "" && comp != weights.Transformer:
			// Single-file trees (the Comfy-Org repack, GGUF sets) carry no
			// config.json for these; the DiT reads its config from the
			// file's metadata or shapes, the others have no such source yet.
			errs = append(errs, fmt.Errorf("engine: the %s has no config.json in this %s snapshot; rendering needs the official folder layout for it", comp, e.snap.Format))
		}
	}
	return errors.Join(errs...)
}

// generation is one Generate call's state, handed from phase to phase.
type generation struct {
	e     *Engine
	req   Request
	plan  *plan.Plan
	part  *weights.Partition
	sink  Sink
	start time.Time
	times []PhaseTime

	inputs  []*prepared // anchors (FL2VA) or references (Ref2VA), in layout order
	text    *textResult
	video   []float32 // target video latent [C][T][H][W] after denoise
	audio   []float32 // target audio latent [C][2][Ta]
	latent  [4]int    // the target video latent's shape
	forward int
	cached  []string
	parts   []PhaseTime
}

// timePart times one stage inside a phase for Stats.Parts.
func (g *generation) timePart(name string, t0 time.Time) {
	g.parts = append(g.parts, PhaseTime{Phase: Phase(name), Elapsed: time.Since(t0)})
}

// phase runs one stage with its start and end events, mapping a canceled
// context to ErrCanceled.
func (g *generation) phase(ctx context.Context, name Phase, run func(context.Context) error) error {
	if ctx.Err() != nil {
		return ErrCanceled
	}
	t0 := time.Now()
	g.sink(Event{Kind: EventStart, Phase: name})
	g.e.log.Info("engine: phase", "phase", string(name))
	err := run(ctx)
	// The phase's graphs are done and their results read: its compute
	// buffers must not count against the next phase's plan.
	if g.e.backend != nil {
		g.e.backend.ReleaseScratch()
	}
	el := time.Since(t0)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, ErrCanceled) {
			return ErrCanceled
		}
		return fmt.Errorf("engine: %s: %w", name, err)
	}
	g.times = append(g.times, PhaseTime{Phase: name, Elapsed: el})
	g.e.log.Info("engine: phase done", "phase", string(name), "ms", el.Milliseconds())
	g.sink(Event{Kind: EventEnd, Phase: name, Elapsed: el})
	return nil
}

func (g *generation) stats() *Stats {
	return &Stats{
		Phases:     g.times,
		Total:      time.Since(g.start),
		PeakBytes:  peakRSS(),
		Rows:       g.text.layout.Rows,
		TextTokens: g.text.out.Tokens,
		Frames:     g.plan.Frames,
		Forwards:   g.forward,
		Cached:     g.cached,
		Parts:      g.parts,
	}
}

// component opens one component of the run's partition.
// videoVAE opens the partition's video VAE with its config; the caller
// closes the source when the phase ends.
func (g *generation) videoVAE() (weights.Source, *vae.VideoConfig, error) {
	_, src, err := g.component(weights.VideoVAE)
	if err != nil {
		return nil, nil, err
	}
	return src, g.model().VideoVAE, nil
}

// audioVAE is videoVAE for the audio VAE.
func (g *generation) audioVAE() (weights.Source, *vae.AudioConfig, error) {
	_, src, err := g.component(weights.AudioVAE)
	if err != nil {
		return nil, nil, err
	}
	return src, g.model().AudioVAE, nil
}

func (g *generation) component(name string) (*weights.Component, weights.Source, error) {
	c := g.part.Component(name)
	if c == nil {
		return nil, nil, fmt.Errorf("the %s partition has no %s", g.part.Name, name)
	}
	src, err := c.Open()
	if err != nil {
		return nil, nil, err
	}
	return c, src, nil
}
