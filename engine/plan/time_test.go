package plan

import (
	"math"
	"testing"

	"h3studio/engine/layout"
)

// walkthroughRequest is the walk-through's slow render: five pictures, a
// 3 s clip with its sound and a wav, 128² for 56 frames, 2 steps.
func walkthroughRequest() Request {
	r := Request{Canvas: layout.Canvas{Width: 128, Height: 128}, Frames: 56, PromptTokens: 9, Steps: 2}
	for i := range 5 {
		r.Refs = append(r.Refs, Reference{Kind: layout.RefImage, Path: "p" + string(rune('1'+i)) + ".png",
			Media: Media{Width: 640, Height: 480}})
	}
	r.Refs = append(r.Refs,
		Reference{Kind: layout.RefVideoAudio, Path: "clip.mp4", Media: Media{Width: 320, Height: 240, DurationS: 3, FPS: 24, Frames: 72, AudioSeconds: 3}},
		Reference{Kind: layout.RefAudio, Path: "music.wav", Media: Media{DurationS: 4, AudioRate: 32000}})
	return r
}

func TestFitRate(t *testing.T) {
	for _, c := range []struct {
		name    string
		samples []Sample
		want    Rate
	}{
		{"line", []Sample{{10, 3}, {20, 5}, {40, 9}}, Rate{FixedSeconds: 1, PerSecond: 5}},
		{"one sample is all rate", []Sample{{10, 2}}, Rate{PerSecond: 5}},
		{"negative intercept goes through 0", []Sample{{10, 1}, {20, 4}}, Rate{PerSecond: 500.0 / 90}},
		{"no work is a constant", []Sample{{0, 2}, {0, 4}}, Rate{FixedSeconds: 3}},
		{"falling time is a constant", []Sample{{10, 4}, {20, 2}}, Rate{FixedSeconds: 3}},
		{"nothing", nil, Rate{}},
	} {
		got := FitRate(c.samples)
		if math.Abs(got.FixedSeconds-c.want.FixedSeconds) > 1e-9 || math.Abs(got.PerSecond-c.want.PerSecond) > 1e-9 {
			t.Errorf("%s: FitRate = %+v, want %+v", c.name, got, c.want)
		}
	}
}

// Before measurement every phase the engine runs is costed, the pixel
// phases included (the walk-through's plan said 0.1 s for 1 min 52 s,
// leaving references and the mux out).
func TestEstimateCostsEveryPhase(t *testing.T) {
	p := mustPlan(t, walkthroughRequest(), "m4-pro-64", "tiny", Options{})
	var names []string
	for _, pc := range p.Time.Phases {
		names = append(names, pc.Phase)
		if pc.Work <= 0 || pc.Seconds <= 0 {
			t.Errorf("%s: work %g %s, %g s; want both positive", pc.Phase, pc.Work, pc.Unit, pc.Seconds)
		}
	}
	if got := len(names); got != len(TimePhases) {
		t.Fatalf("phases %v, want %v", names, TimePhases)
	}
	// A 1024x768 clip of 56 decoded frames and five 2720x2048 pictures.
	if w := p.Time.Phase(TimeReferences).Work; w < 5*2720*2048/1e6 {
		t.Errorf("references work %.1f Mpx, want at least the five pictures' %.1f", w, 5*2720*2048/1e6)
	}
	if p.Time.Source != "peak" {
		t.Errorf("source %q, want peak", p.Time.Source)
	}
}

// Measured rates go through the one formula, and what an engine has cached
// costs nothing.
func TestEstimateFromRates(t *testing.T) {
	mc := mustMachine(t, "m4-pro-64")
	mc.Rates = &Rates{Source: "calibration", Phases: map[string]Rate{
		TimeReferences: {FixedSeconds: 0.5, PerSecond: 2},
		TimeEncode:     {FixedSeconds: 0.25, PerSecond: 10},
		TimeDenoise:    {FixedSeconds: 0.1, PerSecond: 1},
		TimeDecode:     {FixedSeconds: 1, PerSecond: 0.5},
		TimeMux:        {FixedSeconds: 0.2, PerSecond: 4},
	}}
	p, err := Make(walkthroughRequest(), mc, mustModel(t, "tiny"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, pc := range p.Time.Phases {
		r := mc.Rates.Phases[pc.Phase]
		if want := r.FixedSeconds + pc.Work/r.PerSecond; math.Abs(pc.Seconds-want) > 1e-9 {
			t.Errorf("%s: %g s, want %g", pc.Phase, pc.Seconds, want)
		}
		sum += pc.Seconds
	}
	if math.Abs(p.Time.Seconds-sum) > 1e-9 || p.Time.Source != "calibration" {
		t.Errorf("total %g s from %q, want the phases' %g from calibration", p.Time.Seconds, p.Time.Source, sum)
	}
	r := walkthroughRequest()
	r.Cached = Cached{Refs: []bool{true, true, true, true, true, true, true}, Text: true}
	c, err := Make(r, mc, mustModel(t, "tiny"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if ref, enc := c.Time.Phase(TimeReferences), c.Time.Phase(TimeEncode); ref.Seconds != 0 || enc.Seconds != 0 {
		t.Errorf("cached inputs still cost references %g s, encode %g s", ref.Seconds, enc.Seconds)
	}
	if c.Time.Phase(TimeDenoise) != p.Time.Phase(TimeDenoise) || c.Memory.PeakBytes != p.Memory.PeakBytes {
		t.Errorf("the cache changed the denoise or the memory")
	}
}

// The mux phase is FFmpeg's measured resident size, which grows with the
// output's pixels (68 MiB at 128², 293 MiB at 1280x736), not a flat 256 MiB.
func TestMuxMemoryMeasured(t *testing.T) {
	for _, c := range []struct {
		w, h int
		mib  float64
	}{{128, 128, 68}, {512, 512, 132}, {1280, 736, 293}} {
		r := Request{Canvas: layout.Canvas{Width: c.w, Height: c.h}, Frames: 22, PromptTokens: 9}
		p := mustPlan(t, r, "m4-pro-64", "tiny", Options{})
		for _, ph := range p.Memory.Phases {
			if ph.Name == PhaseMux {
				if got := float64(ph.ScratchBytes) / (1 << 20); math.Abs(got-c.mib) > 0.1*c.mib {
					t.Errorf("%dx%d: mux scratch %.0f MiB, FFmpeg measured %.0f", c.w, c.h, got, c.mib)
				}
			}
		}
	}
}

// A reference clip is priced at the clip rate over the frames the encoder
// runs (its chunks' frames but those that feed only dropped steps),
// pictures at the references rate: the one rate for both put a first
// render with a clip 60 % over its estimate.
func TestReferenceClipsPricedApart(t *testing.T) {
	c := layout.Canvas{Width: 1000, Height: 1000}
	l := &layout.Layout{Refs: []layout.RefLayout{{Canvas: c, Frames: 1}, {Canvas: c, Frames: 72, VAEFrames: 56}}}
	pics, clips := referenceWork(l, Dims{VAEClipLength: 17, VAETimeRatio: 4, VAETokenDrop: 3}, 0, nil)
	if pics != 1 || clips != 56 {
		t.Fatalf("work: pictures %g, clips %g Mpx-frames; want 1 and 56 (17+17+17+5 frames of four 17-frame chunks)", pics, clips)
	}
	// The release's 256-px tiles with 64 px of overlap: 320x256 is two
	// tiles wide, 256x512 px encoded per frame (1.6x the canvas).
	d := Dims{VAETile: 256, VAETileOverlap: 64}
	if got, want := d.encodedMpx(layout.Canvas{Width: 320, Height: 256}, 1), 512*256/1e6; math.Abs(got-want) > 1e-12 {
		t.Errorf("320x256 encodes %g Mpx, want %g", got, want)
	}
	refs, clip := Rate{FixedSeconds: 0.5, PerSecond: 2}, Rate{PerSecond: 4}
	if got, want := referenceSeconds(pics, clips, refs, clip), 0.5+0.5+14.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("priced %g s, want %g", got, want)
	}
	// No clip measured yet: clips take the pictures' rate.
	if got, want := referenceSeconds(pics, clips, refs, Rate{}), 0.5+0.5+28.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("without a clip rate: %g s, want %g", got, want)
	}
	if got := referenceSeconds(0, 0, refs, clip); got != 0 {
		t.Errorf("no references: %g s", got)
	}
}
