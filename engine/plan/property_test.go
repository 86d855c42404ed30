package plan

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"testing"

	"h3studio/engine/layout"
)

// randomRequest draws a valid request: canvas, length, prompt and up to
// six ordered references of every kind, or FL2VA anchors.
func randomRequest(rng *rand.Rand) Request {
	var c layout.Canvas
	for {
		c = layout.Canvas{Width: 32 * (4 + rng.Intn(40)), Height: 32 * (4 + rng.Intn(40))}
		if c.Pixels() <= layout.MaxCanvasPixels && aspectRatioOK(c) {
			break
		}
	}
	r := Request{Canvas: c, Frames: 22 + rng.Intn(341), PromptTokens: rng.Intn(400),
		ImagePolicy: layout.ImagePolicy(rng.Intn(3)), Steps: 4 + rng.Intn(30), Reuse: 1 + rng.Intn(3)}
	switch rng.Intn(3) {
	case 1:
		r.First = "first.png"
		if rng.Intn(2) == 0 {
			r.Last = "last.png"
		}
	case 2:
		n := 1 + rng.Intn(6)
		audio := 0
		for i := 0; i < n; i++ {
			size := Media{Width: 200 + rng.Intn(3800), Height: 200 + rng.Intn(3800)}
			if !aspectRatioOK(layout.Canvas{Width: size.Width, Height: size.Height}) {
				size.Height = size.Width
			}
			switch k := rng.Intn(4); {
			case k == 0 || i == 0:
				r.Refs = append(r.Refs, Reference{Kind: layout.RefImage, Path: fmt.Sprintf("i%d.png", i), Media: size})
			case k == 1:
				size.DurationS = 1 + 20*rng.Float64()
				r.Refs = append(r.Refs, Reference{Kind: layout.RefVideo, Path: fmt.Sprintf("v%d.mp4", i), Media: size})
			default:
				if audio >= 1 {
					continue
				}
				audio++
				r.Refs = append(r.Refs, Reference{Kind: layout.RefAudio, Path: fmt.Sprintf("a%d.wav", i), Media: Media{DurationS: 2 + 10*rng.Float64()}})
			}
		}
	}
	return r
}

func aspectRatioOK(c layout.Canvas) bool {
	return c.Width <= 4*c.Height && c.Height <= 4*c.Width
}

// For random valid requests: every decision lowers the phase it relieves
// or the sequence; the final plan is under budget or refused; and the same
// input always gives the same plan.
func TestPlanProperties(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	machines := []string{"m1-air-8", "m5-air-16", "m4-pro-24", "m3-max-36", "m5-max-64", "m3-ultra-96", "m5-max-128", "m2-ultra-192"}
	models := []string{"official-bf16", "official-q8_0", "official-q4_k", "comfy-bf16"}
	var fits, refused, decided int
	for i := 0; i < 300; i++ {
		r := randomRequest(rng)
		mc := mustMachine(t, machines[rng.Intn(len(machines))])
		m := mustModel(t, models[rng.Intn(len(models))])
		opt := Options{}
		if rng.Intn(3) == 0 {
			opt.MaxSequence = []int{7936, 4000, 20000}[rng.Intn(3)]
		}
		p, err := Make(r, mc, m, opt)
		if err != nil {
			t.Fatalf("case %d: %v (%+v)", i, err, r)
		}
		for _, d := range p.Decisions {
			if !(d.PeakAfter < d.PeakBefore || d.SequenceAfter < d.SequenceBefore) {
				t.Errorf("case %d: decision %s lowered nothing: %+v", i, d.Kind, d)
			}
		}
		switch p.Verdict {
		case Fits:
			fits++
			if p.Memory.PeakBytes > p.Memory.BudgetBytes || opt.MaxSequence > 0 && p.TextTokens.Total > opt.MaxSequence {
				t.Errorf("case %d: fits but peak %d > %d or sequence %d > %d", i, p.Memory.PeakBytes, p.Memory.BudgetBytes, p.TextTokens.Total, opt.MaxSequence)
			}
		case Refused:
			refused++
			if p.Error == "" {
				t.Errorf("case %d: refused without a reason", i)
			}
			switch rp := p.Repair; {
			case rp == nil:
				t.Errorf("case %d: refused without a repair: %s", i, p.Error)
			case rp.Frames > 0 || rp.Canvas != nil:
				q, err := Make(rp.Apply(r), mc, m, opt)
				if err != nil || q.Verdict != Fits {
					t.Errorf("case %d: repair %q does not fit", i, rp.Text)
				}
			case rp.MemoryGB > 0:
				q, err := Make(r, mc.WithMemoryGB(rp.MemoryGB), m, opt)
				if err != nil || q.Verdict != Fits {
					t.Errorf("case %d: repair %q does not fit", i, rp.Text)
				}
			}
		default:
			t.Errorf("case %d: verdict %q", i, p.Verdict)
		}
		if len(p.Decisions) > 0 {
			decided++
		}
		q, _ := Make(r, mc, m, opt)
		a, _ := json.Marshal(p)
		b, _ := json.Marshal(q)
		if string(a) != string(b) {
			t.Fatalf("case %d: two plans of one request differ", i)
		}
	}
	t.Logf("%d fit, %d refused, %d with decisions", fits, refused, decided)
	if fits == 0 || refused == 0 || decided == 0 {
		t.Error("the random requests do not exercise fitting")
	}
}
