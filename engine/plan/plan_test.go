package plan

import (
	"testing"

	"h3studio/engine/layout"
)

func mustMachine(t *testing.T, n string) Machine {
	t.Helper()
	m, err := LookupMachine(n)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustModel(t *testing.T, n string) Model {
	t.Helper()
	m, err := LookupModel(n)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustPlan(t *testing.T, r Request, mc, m string, opt Options) *Plan {
	t.Helper()
	p, err := Make(r, mustMachine(t, mc), mustModel(t, m), opt)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func kinds(p *Plan) []string {
	var out []string
	for _, d := range p.Decisions {
		out = append(out, d.Kind)
	}
	return out
}

func has(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// seedRequest is the h3.c threadgroup report's request: five 2400 px
// images, a 7.7 s 1080x1920 clip, 160 frames, a long prompt.
func seedRequest(images bool) Request {
	r := Request{Canvas: layout.Canvas{Width: 864, Height: 480}, Frames: 160, PromptTokens: 57}
	if images {
		for i := range 5 {
			r.Refs = append(r.Refs, Reference{Kind: layout.RefImage, Path: "photo" + string(rune('1'+i)) + ".jpg",
				Media: Media{Width: 2400, Height: 1600}})
		}
	}
	r.Refs = append(r.Refs, Reference{Kind: layout.RefVideo, Path: "clip.mov", Media: Media{Width: 1080, Height: 1920, DurationS: 7.7, FPS: 30}})
	return r
}

// The h3.c report failed with 10231 and 8184-token Qwen sequences on an M5
// Max 128 GB and an M3 Ultra 96 GB. Our attention has no sequence cap, so
// both plan as they are; with h3.c's legacy limit declared, the planner
// pools the clip's tokens and still fits.
func TestSeedReportFixed(t *testing.T) {
	for _, mc := range []string{"m5-max-128", "m3-ultra-96"} {
		for _, images := range []bool{true, false} {
			r := seedRequest(images)
			p := mustPlan(t, r, mc, "official-bf16", Options{})
			want := map[bool]int{true: 10231, false: 8191}[images]
			if p.Verdict != Fits || p.TextTokens.Total != want || p.Memory.PeakBytes > p.Memory.BudgetBytes {
				t.Errorf("%s images=%v: %s %q, %d tokens (want %d), peak %d of %d", mc, images, p.Verdict, p.Error,
					p.TextTokens.Total, want, p.Memory.PeakBytes, p.Memory.BudgetBytes)
			}
			t.Logf("%s images=%v: %d Qwen tokens, %d DiT rows, peak %s (%s), %.1f h, decisions %v",
				mc, images, p.TextTokens.Total, p.DiTRows.Total, gb(p.Memory.PeakBytes), p.Memory.PeakPhase, p.Time.Seconds/3600, kinds(p))

			limit := LegacyQwenLimit(mustMachine(t, mc).Threadgroup)
			p = mustPlan(t, r, mc, "official-bf16", Options{MaxSequence: limit})
			if p.Verdict != Fits || p.TextTokens.Total > limit || !has(kinds(p), DecidePoolTemporal) {
				t.Errorf("%s images=%v limit %d: %s %q, %d tokens, decisions %v", mc, images, limit, p.Verdict, p.Error, p.TextTokens.Total, kinds(p))
			}
			for _, d := range p.Decisions {
				t.Logf("  %s %s: %s", d.Kind, d.Target, d.Reason)
			}
		}
	}
}

// Five 2400 px photos on a 96 GB machine (168 GB in the h3.c-based
// webapp): each is down-scaled to the output's area before the vision
// tower and VAE, and the peak stays under budget. Under the released
// 2048-short-edge policy they are scaled up instead, and still fit.
func TestLargeImagesDownscaled(t *testing.T) {
	r := seedRequest(true)
	r.Refs = r.Refs[:5]
	for _, pol := range []layout.ImagePolicy{layout.PolicyMatch, layout.PolicyOfficial} {
		r.ImagePolicy = pol
		p := mustPlan(t, r, "m3-ultra-96", "official-bf16", Options{})
		if p.Verdict != Fits || p.Memory.PeakBytes > p.Memory.BudgetBytes {
			t.Fatalf("%v: %s %q", pol, p.Verdict, p.Error)
		}
		for _, rp := range p.References {
			if rp.ScaledFrom == nil || *rp.ScaledFrom != (layout.Canvas{Width: 2400, Height: 1600}) {
				t.Errorf("%v: %s not marked as scaled: %+v", pol, rp.Path, rp)
			}
			if pol == layout.PolicyMatch && rp.Canvas != (layout.Canvas{Width: 800, Height: 512}) {
				t.Errorf("match: %s canvas %v, want 800x512", rp.Path, rp.Canvas)
			}
		}
		t.Logf("%v: canvas %v, %d Qwen tokens, peak %s (%s)", pol, p.References[0].Canvas, p.TextTokens.Total, gb(p.Memory.PeakBytes), p.Memory.PeakPhase)
	}
}

// The vpipe report: official bf16 FL2VA at 544x960x124 on a 64 GB Mac ran
// with zero swap, yet vpipe warned that its 'condition' phase needed
// 64,201 MB. Our phases never add the encoder to the DiT: the plan fits,
// with the encoder streamed when anchors make it necessary, and warns nothing.
func TestOfficialBF16On64GB(t *testing.T) {
	for _, anchors := range []bool{false, true} {
		r := Request{Canvas: layout.Canvas{Width: 960, Height: 544}, Frames: 124, PromptTokens: 32}
		if anchors {
			r.First, r.Last = "first.png", "last.png"
		}
		p := mustPlan(t, r, "m5-max-64", "official-bf16", Options{})
		if p.Verdict != Fits || len(p.Warnings) != 0 || p.Memory.PeakBytes > p.Memory.BudgetBytes || p.Memory.PeakBytes >= 64201e6 {
			t.Errorf("anchors=%v: %s %q warnings %v peak %d", anchors, p.Verdict, p.Error, p.Warnings, p.Memory.PeakBytes)
		}
		if !anchors && p.DiTRows.Total != 19316 {
			t.Errorf("T2VA rows %d, want 19316", p.DiTRows.Total)
		}
		for _, ph := range p.Memory.Phases {
			if ph.Name == PhaseText && ph.WeightsBytes > 52e9 || ph.Name == PhaseDenoise && ph.WeightsBytes > 42e9 {
				t.Errorf("%s holds %s of weights", ph.Name, gb(ph.WeightsBytes))
			}
		}
		t.Logf("anchors=%v: rows %d, peak %s in %s, residency %+v, decisions %v", anchors, p.DiTRows.Total, gb(p.Memory.PeakBytes), p.Memory.PeakPhase, p.Residency, kinds(p))
	}
}

// A request that cannot fit is refused with a repair that fits when applied.
func TestRefusedWithRepair(t *testing.T) {
	r := Request{Canvas: layout.Canvas{Width: 1344, Height: 768}, Frames: 362, PromptTokens: 40}
	mc := mustMachine(t, "m1-air-8")
	m := mustModel(t, "official-bf16")
	p, err := Make(r, mc, m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Verdict != Refused || p.Repair == nil || p.Error == "" {
		t.Fatalf("%s %q %+v", p.Verdict, p.Error, p.Repair)
	}
	t.Logf("refused: %s", p.Error)
	for _, ph := range p.Memory.Phases {
		t.Logf("  %-16s peak %s weights %s scratch %s media %s carried %s", ph.Name, gb(ph.PeakBytes), gb(ph.WeightsBytes), gb(ph.ScratchBytes), gb(ph.MediaBytes), gb(ph.CarriedBytes))
	}
	for _, d := range p.Decisions {
		t.Logf("  %s: %s", d.Kind, d.Reason)
	}
	if p.Repair.Frames > 0 || p.Repair.Canvas != nil {
		q, err := Make(p.Repair.Apply(r), mc, m, Options{})
		if err != nil || q.Verdict != Fits {
			t.Errorf("repair %q applied: %v %s %q", p.Repair.Text, err, q.Verdict, q.Error)
		}
	}
	if p.Repair.Model != "" {
		q, err := Make(r, mc, mustModel(t, p.Repair.Model), Options{})
		if err != nil || q.Verdict != Fits {
			t.Errorf("repair model %s: %v %s", p.Repair.Model, err, q.Verdict)
		}
	}
	// A sequence limit no fitting can meet: refused, with fewer frames as
	// the repair when that shortens the reference enough.
	r = seedRequest(true)
	q := mustPlan(t, r, "m5-max-128", "official-bf16", Options{MaxSequence: 600})
	if q.Verdict != Refused {
		t.Errorf("limit 600: %s, %d tokens", q.Verdict, q.TextTokens.Total)
	}
	t.Logf("limit 600: %s", q.Error)
}

func TestRuleErrors(t *testing.T) {
	mc, m := mustMachine(t, "m5-max-128"), mustModel(t, "official-bf16")
	bad := []Request{
		{Canvas: layout.Canvas{Width: 500, Height: 512}, Frames: 22},
		{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 400},
		{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 22, Refs: []Reference{{Kind: layout.RefAudio, Media: Media{DurationS: 5}}}},
		{Canvas: layout.Canvas{Width: 512, Height: 512}, RenderCanvas: layout.Canvas{Width: 384, Height: 256}, Frames: 22},
	}
	for i, r := range bad {
		if _, err := Make(r, mc, m, Options{}); err == nil {
			t.Errorf("case %d accepted", i)
		}
	}
}
