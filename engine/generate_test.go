package engine

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"os"
	"reflect"
	"sync"
	"testing"

	"h3studio/engine/layout"
	"h3studio/engine/plan"
)

var (
	tinyOnce sync.Once
	tinyRoot string
	tinyDir  string
	tinyErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if tinyRoot != "" {
		os.RemoveAll(tinyRoot)
	}
	os.Exit(code)
}

// openTiny opens the embedded tiny model (written once per test run) on
// one CPU thread.
func openTiny(t *testing.T) *Engine {
	t.Helper()
	tinyOnce.Do(func() {
		if tinyRoot, tinyErr = os.MkdirTemp("", "h3studio-engine-"); tinyErr == nil {
			tinyDir, tinyErr = TinyModelDir(tinyRoot)
		}
	})
	if tinyErr != nil {
		t.Fatal(tinyErr)
	}
	e, err := Open(tinyDir, Options{Threads: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

// tinyPlan plans r (its prompt and knobs) as a 64x64 clip of 22 frames.
func tinyPlan(t *testing.T, e *Engine, r plan.Request) *plan.Plan {
	t.Helper()
	mc, err := plan.LookupMachine("m5-max-128")
	if err != nil {
		t.Fatal(err)
	}
	r.Canvas, r.Frames = layout.Canvas{Width: 64, Height: 64}, 22
	p, err := e.Plan(r, mc, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// recorder is an Output that keeps a hash of every frame; stop, when set,
// is called before each frame is taken.
type recorder struct {
	begun  int
	w, h   int
	audio  int
	frames [][32]byte
	stop   func(i int)
}

func (r *recorder) Begin(w, h, frames int, a Audio) error {
	r.begun++
	r.w, r.h, r.audio = w, h, a.Frames()
	return nil
}

func (r *recorder) Frame(i int, p Pixels) error {
	if r.stop != nil {
		r.stop(i)
	}
	if i != len(r.frames) || p.Width != r.w || len(p.RGB) != 3*r.w*r.h {
		return errors.New("frames out of order or of the wrong size")
	}
	r.frames = append(r.frames, sha256.Sum256(p.RGB))
	return nil
}

// TestGenerateT2VA runs a whole generation twice on one engine: the clip
// has the plan's frame count on its canvas and exactly F/24 s of 32 kHz
// audio, the second run takes the text conditioning from the cache and
// gives the same frames, and a preview image came with every step.
func TestGenerateT2VA(t *testing.T) {
	e := openTiny(t)
	p := tinyPlan(t, e, plan.Request{Prompt: "a red fox", Steps: 2})
	var runs [2]recorder
	for i := range runs {
		previews, steps := 0, 0
		st, err := e.Generate(context.Background(), Request{Seed: 3, Preview: true, Output: &runs[i]}, p,
			func(ev Event) {
				if ev.Phase == PhaseDenoise && ev.Kind == EventProgress {
					steps++
					if ev.Preview != nil && ev.Preview.Bounds().Dx() == p.Canvas.LatentW() {
						previews++
					}
				}
			})
		if err != nil {
			t.Fatal(err)
		}
		r := &runs[i]
		if r.begun != 1 || len(r.frames) != 22 || r.w != 64 || r.h != 64 || r.audio != 22*32000/24 {
			t.Fatalf("run %d: begun %d, %d frames of %dx%d, %d audio samples; want 1, 22 of 64x64, %d", i, r.begun, len(r.frames), r.w, r.h, r.audio, 22*32000/24)
		}
		if steps != 2 || previews != 2 {
			t.Errorf("run %d: %d step events, %d previews; want 2 and 2", i, steps, previews)
		}
		if want := []string(nil); i == 1 {
			want = []string{"text"}
			if !reflect.DeepEqual(st.Cached, want) {
				t.Errorf("second run cached %v, want %v", st.Cached, want)
			}
		}
		if st.Rows != p.Layout.Rows-p.Layout.Qwen.Tokens()+st.TextTokens || st.Forwards != 2 || len(st.Phases) != 4 {
			t.Errorf("stats %+v", st)
		}
	}
	if !reflect.DeepEqual(runs[0].frames, runs[1].frames) {
		t.Error("the same seed gave different frames")
	}
}

// TestGenerateCancel cancels during the denoise (before any output) and
// during the decode (after frame 3): both end with ErrCanceled, the first
// before the output begins, the second with no frame taken after the
// cancel.
func TestGenerateCancel(t *testing.T) {
	e := openTiny(t)
	p := tinyPlan(t, e, plan.Request{Prompt: "x", Steps: 50})
	ctx, cancel := context.WithCancel(context.Background())
	var out recorder
	_, err := e.Generate(ctx, Request{Output: &out}, p, func(ev Event) {
		if ev.Phase == PhaseDenoise && ev.Step == 1 {
			cancel()
		}
	})
	if !errors.Is(err, ErrCanceled) || out.begun != 0 {
		t.Errorf("cancel in denoise: %v, output begun %d times", err, out.begun)
	}
	p = tinyPlan(t, e, plan.Request{Prompt: "x", Steps: 1})
	ctx, cancel = context.WithCancel(context.Background())
	out = recorder{stop: func(i int) {
		if i == 3 {
			cancel()
		}
	}}
	_, err = e.Generate(ctx, Request{Output: &out}, p, nil)
	if !errors.Is(err, ErrCanceled) || len(out.frames) != 4 {
		t.Errorf("cancel in decode: %v after %d frames; want ErrCanceled after 4", err, len(out.frames))
	}
}

// TestGenerateChecksRequest refuses, before any phase runs, what only
// Generate can see: a missing output or media reader, a refused plan, a
// plan for a partition the snapshot lacks.
func TestGenerateChecksRequest(t *testing.T) {
	e := openTiny(t)
	p := tinyPlan(t, e, plan.Request{Prompt: "x", Steps: 2})
	anchored := tinyPlan(t, e, plan.Request{Prompt: "x", Steps: 2, First: "a.png"})
	refused, foreign := *p, *p
	refused.Verdict = plan.Refused
	foreign.Partition = "elsewhere"
	phases := 0
	sink := func(Event) { phases++ }
	for name, c := range map[string]struct {
		r Request
		p *plan.Plan
	}{
		"no output":         {Request{}, p},
		"anchor, no media":  {Request{Output: &recorder{}}, anchored},
		"no plan":           {Request{Output: &recorder{}}, nil},
		"refused plan":      {Request{Output: &recorder{}}, &refused},
		"foreign partition": {Request{Output: &recorder{}}, &foreign},
	} {
		if _, err := e.Generate(context.Background(), c.r, c.p, sink); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if phases != 0 {
		t.Errorf("%d events from refused requests", phases)
	}
}

// TestPlanChecksKnobs refuses sampler settings at plan time, so Generate
// never meets them.
func TestPlanChecksKnobs(t *testing.T) {
	e := openTiny(t)
	mc, err := plan.LookupMachine("m5-max-128")
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]plan.Request{
		"negative steps":      {Steps: -1},
		"negative core reuse": {CoreReuse: -2},
		"both reuses":         {Reuse: 2, CoreReuse: 2},
	} {
		r.Canvas, r.Frames = layout.Canvas{Width: 64, Height: 64}, 22
		if _, err := e.Plan(r, mc, plan.Options{}); err == nil {
			t.Errorf("%s: planned", name)
		}
		if _, err := PlanFor(e.Profile(), r, mc, plan.Options{}); err == nil {
			t.Errorf("%s: planned from the profile", name)
		}
	}
}

// TestGenerateSpeedPolicies runs core reuse and token reduction through a
// whole generation: each changes the frames (the policies are live) and
// keeps the clip complete.
func TestGenerateSpeedPolicies(t *testing.T) {
	e := openTiny(t)
	var base, core, reduced recorder
	for _, c := range []struct {
		out *recorder
		req plan.Request
	}{
		{&base, plan.Request{Prompt: "x", Steps: 4}},
		{&core, plan.Request{Prompt: "x", Steps: 4, CoreReuse: 2}},
		{&reduced, plan.Request{Prompt: "x", Steps: 4, TokenReduction: true}},
	} {
		p := tinyPlan(t, e, c.req)
		if _, err := e.Generate(context.Background(), Request{Output: c.out}, p, nil); err != nil {
			t.Fatal(err)
		}
		if len(c.out.frames) != 22 {
			t.Fatalf("%d frames", len(c.out.frames))
		}
	}
	if reflect.DeepEqual(base.frames, core.frames) || reflect.DeepEqual(base.frames, reduced.frames) {
		t.Error("a speed policy left the frames unchanged")
	}
	for n, want := range map[int][3]int{50: {4, 30, 40}, 2: {0, 1, 1}, 40: {3, 24, 32}} {
		tr := tokenReduction(n)
		if got := [3]int{tr.Begin, tr.End, tr.EarlyEnd}; got != want {
			t.Errorf("token reduction for %d blocks: %v, want %v", n, got, want)
		}
	}
}

// TestPhasesStartWithoutScratch: every phase begins with no compute
// buffers held for the one before it (ggml's allocator never shrinks
// them, so the decode would otherwise carry the denoise's), and each
// phase did plan some.
func TestPhasesStartWithoutScratch(t *testing.T) {
	e := openTiny(t)
	p := tinyPlan(t, e, plan.Request{Prompt: "a red fox", Steps: 2})
	held := map[Phase]int{}
	used := map[Phase]int{}
	_, err := e.Generate(context.Background(), Request{Seed: 3, Output: &recorder{}}, p, func(ev Event) {
		switch ev.Kind {
		case EventStart:
			held[ev.Phase] = e.backend.ScratchBytes()
		case EventProgress:
			used[ev.Phase] = max(used[ev.Phase], e.backend.ScratchBytes())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	for ph, n := range held {
		if n != 0 {
			t.Errorf("phase %s began with %d B of compute buffers held", ph, n)
		}
	}
	if used[PhaseDenoise] == 0 {
		t.Errorf("the denoise held no compute buffers during its steps (%v): the check above would see nothing", used)
	}
}
