package engine

import (
	"context"
	"testing"
	"time"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/engine/vae"
)

// TestVideoDecodeOptionsFollowPlan: the decoder's tile is the planner's
// choice. Where the plan holds the release decoder resident the config's
// 256-px tile decodes; under a budget tight enough that the fitter
// streams the decoder, one call's activations are bounded by the decode
// phase's scratch: the tile is the largest that fits it (the release's
// 256-px call needs 206 MB, inside the 256-MB floor of that budget).
func TestVideoDecodeOptionsFollowPlan(t *testing.T) {
	cfg, err := arch.ReleaseVideoVAE()
	if err != nil {
		t.Fatal(err)
	}
	m, err := plan.LookupModel("official-bf16")
	if err != nil {
		t.Fatal(err)
	}
	base, err := plan.LookupMachine("m5-max-128")
	if err != nil {
		t.Fatal(err)
	}
	r := plan.Request{Canvas: layout.Canvas{Width: 1344, Height: 768}, Frames: 124, Prompt: "a red fox running through snow at dawn"}
	for _, c := range []struct {
		gb       float64
		streamed bool
	}{{200, false}, {8, true}} {
		p, err := PlanFor(m, r, base.WithBudgetGB(c.gb), plan.Options{})
		if err != nil {
			t.Fatal(err)
		}
		o := VideoDecodeOptions(p, ggml.Precision{})
		ts := vae.DecodeTile(cfg, o)
		t.Logf("%g GB: decoder %s, call budget %d B, tile %d px", c.gb, p.Residency.VAEDecoder, o.MemoryBudget, ts)
		if got := p.Residency.VAEDecoder == plan.Streamed; got != c.streamed {
			t.Fatalf("%g GB: decoder %s, want streamed %v", c.gb, p.Residency.VAEDecoder, c.streamed)
		}
		if !c.streamed {
			if o.MemoryBudget != 0 || ts != cfg.TileSize {
				t.Errorf("%g GB: resident decoder got budget %d and tile %d, want none and %d", c.gb, o.MemoryBudget, ts, cfg.TileSize)
			}
			continue
		}
		var scratch int64
		for _, ph := range p.Memory.Phases {
			if ph.Name == plan.PhaseDecode {
				scratch = ph.ScratchBytes
			}
		}
		r := cfg.SpatialRatio()
		largest := ts == cfg.TileSize || vae.TileBytes(cfg, ts+r) > o.MemoryBudget
		if o.MemoryBudget != max(scratch, 1<<28) || vae.TileBytes(cfg, ts) > o.MemoryBudget || !largest {
			t.Errorf("%g GB: budget %d (phase scratch %d), tile %d needing %d B; want the phase's budget and the largest tile within it",
				c.gb, o.MemoryBudget, scratch, ts, vae.TileBytes(cfg, ts))
		}
	}
}

// slowBegin is a recorder whose Begin takes a second, as a long
// soundtrack decode does before the first frame.
type slowBegin struct{ recorder }

func (s *slowBegin) Begin(w, h, frames int, a Audio) error {
	time.Sleep(time.Second)
	return s.recorder.Begin(w, h, frames, a)
}

// TestDecodeETAFromFramePace: once frames come, the decode's ETA is their
// pace, not the phase's seconds so far spread over them. Counted from the
// phase's start, the second spent before the first frame made the 22-frame
// clip's first ETA at least 21 s (the demo's soundtrack promised five
// minutes after its first frame).
func TestDecodeETAFromFramePace(t *testing.T) {
	e := openTiny(t)
	p := tinyPlan(t, e, plan.Request{Prompt: "a red fox", Steps: 1})
	var first time.Duration
	_, err := e.Generate(context.Background(), Request{Seed: 3, Output: &slowBegin{}}, p, func(ev Event) {
		if ev.Phase == PhaseDecode && ev.Kind == EventProgress && ev.Step == 1 {
			first = ev.ETA
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if first <= 0 || first > 10*time.Second {
		t.Errorf("ETA at the first of 22 frames %v, want the frames' own pace (a few seconds at most)", first)
	}
}
