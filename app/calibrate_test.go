package app

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"h3studio/engine"
	"h3studio/engine/plan"
)

// A finished job of the model refines its phases; a job of another model
// does not, and the calibration prices the rest.
func TestFitRatesFromHistory(t *testing.T) {
	job := func(model string, work, seconds float64) Entry {
		p := plan.Plan{Time: plan.Estimate{Phases: []plan.PhaseCost{{Phase: plan.TimeReferences, Work: work}}}}
		pj, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		rj, err := json.Marshal(Request{Model: model})
		if err != nil {
			t.Fatal(err)
		}
		return Entry{ID: "x", Status: StatusDone, Plan: pj, Request: rj, Phases: map[string]int64{plan.TimeReferences: int64(seconds * 1000)}}
	}
	cal := &Calibration{Samples: map[string][]plan.Sample{
		plan.TimeReferences: {{Work: 1, Seconds: 1}, {Work: 2, Seconds: 2}},
		plan.TimeDecode:     {{Work: 1, Seconds: 3}, {Work: 3, Seconds: 5}},
	}}
	hist := historySamples([]Entry{job("", 40, 80), job("/models/h3", 40, 1)}, "", historyLimit)
	r := FitRates(cal, hist)
	if r.Source != plan.SourceHistory {
		t.Errorf("source %q, want history", r.Source)
	}
	if got := r.Phases[plan.TimeReferences]; math.Abs(got.PerSecond-0.5) > 1e-9 || got.FixedSeconds != 0 {
		t.Errorf("references %+v, want 0.5 Mpx/s from the tiny model's job", got)
	}
	if got := r.Phases[plan.TimeDecode]; math.Abs(got.FixedSeconds-2) > 1e-9 || math.Abs(got.PerSecond-1) > 1e-9 {
		t.Errorf("decode %+v, want the calibration's 2 s + 1 Mpx/s", got)
	}
	if FitRates(nil, nil) != nil {
		t.Error("no measurement gave rates")
	}
}

// The first start's calibration is stored under the binary and machine,
// and the plans made afterwards are priced from it.
func TestCalibrate(t *testing.T) {
	rd := newRenderer(t)
	rd.CacheDir = t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := rd.CalibrateOnce(ctx, "auto"); err != nil {
		t.Fatal(err)
	}
	mc, err := LookupMachine("auto")
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadCalibration(rd.CacheDir, mc.Name)
	if err != nil || c == nil {
		t.Fatalf("no stored calibration (%v)", err)
	}
	for _, ph := range plan.TimePhases {
		if len(c.Samples[ph]) != 2 {
			t.Errorf("%s: %d samples, want 2", ph, len(c.Samples[ph]))
		}
	}
	r := tinyRequest(t, "after.mp4")
	r.References = []Reference{{Kind: RefImage, Path: fixtures(t).image1}}
	p, err := rd.Plan(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	if p.Time.Source != plan.SourceCalibration || p.Time.Phase(plan.TimeReferences).Seconds <= 0 {
		t.Errorf("plan priced from %q with references %+v; want the calibration", p.Time.Source, p.Time.Phase(plan.TimeReferences))
	}
	t.Logf("calibration %+v; estimate %s", FitRates(c, nil).Phases, EstimateText(p.Time))
}

// Every phase that reports progress carries an ETA from its first event
// on: the walk-through saw "Reading references 5/7" still for 85 s and
// decode at 0 % for most of its time, with none.
func TestProgressETAInEveryPhase(t *testing.T) {
	rd := newRenderer(t)
	r := ref2va(t, "eta.mp4")
	job, err := rd.Prepare(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	var ev events
	if _, err := job.Run(context.Background(), ev.sink); err != nil {
		t.Fatal(err)
	}
	for _, ph := range []engine.Phase{engine.PhaseReferences, engine.PhaseDenoise, engine.PhaseDecode} {
		steps := ev.find(engine.EventProgress, ph)
		if len(steps) == 0 {
			t.Errorf("%s: no progress events", ph)
			continue
		}
		if first := steps[0]; first.ETA <= 0 || first.Total == 0 {
			t.Errorf("%s: first progress %d/%d with ETA %v; want a total and an ETA", ph, first.Step, first.Total, first.ETA)
		}
	}
	// Decode says how long it will take before its first window is out.
	if dec := ev.find(engine.EventProgress, engine.PhaseDecode); len(dec) > 0 && dec[0].Step != 0 {
		t.Errorf("decode's first report is at frame %d; want one at 0 with the plan's ETA", dec[0].Step)
	}
	// The references phase reports each read before any VAE encode.
	refs := ev.find(engine.EventProgress, engine.PhaseReferences)
	if len(refs) != 2*len(r.References) || refs[0].Message != "read" {
		t.Errorf("references reported %d steps starting %q; want %d starting with a read", len(refs), refs[0].Message, 2*len(r.References))
	}
}

// A references phase with clips gives the clip rate its own sample (the
// engine's timed clip encodes) and the rest to the pictures; an entry
// without the clips' time gives no references sample at all.
func TestPhaseSamplesSplitClips(t *testing.T) {
	est := plan.Estimate{Phases: []plan.PhaseCost{{Phase: plan.TimeReferences, Work: 5, ClipWork: 4}, {Phase: plan.TimeMux, Work: 1}}}
	got := phaseSamples(est, map[string]int64{plan.TimeReferences: 3000, plan.TimeReferenceClips: 2500, plan.TimeMux: 100})
	if got[plan.TimeReferenceClips] != (plan.Sample{Work: 4, Seconds: 2.5}) || got[plan.TimeReferences] != (plan.Sample{Work: 1, Seconds: 0.5}) {
		t.Errorf("split samples %+v", got)
	}
	old := phaseSamples(est, map[string]int64{plan.TimeReferences: 3000, plan.TimeMux: 100})
	if _, ok := old[plan.TimeReferences]; ok || old[plan.TimeMux].Seconds != 0.1 {
		t.Errorf("an entry without the clips' time: %+v", old)
	}
}
