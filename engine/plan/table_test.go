package plan

import (
	"fmt"
	"strings"
	"testing"

	"h3studio/engine/layout"
)

// representative are ten requests spanning the tasks and the sizes people
// ask for, including both seed reports.
func representative() []struct {
	name string
	r    Request
} {
	cv := func(w, h int) layout.Canvas { return layout.Canvas{Width: w, Height: h} }
	img := func(w, h int) Reference {
		return Reference{Kind: layout.RefImage, Path: "img.jpg", Media: Media{Width: w, Height: h}}
	}
	clip := func(w, h int, s float64, sound bool) Reference {
		k := layout.RefVideo
		a := 0.0
		if sound {
			k, a = layout.RefVideoAudio, s
		}
		return Reference{Kind: k, Path: "clip.mp4", Media: Media{Width: w, Height: h, DurationS: s, AudioSeconds: a}}
	}
	many := Request{Canvas: cv(1344, 768), Frames: 362, PromptTokens: 120, ImagePolicy: layout.PolicyOfficial}
	for range 9 {
		many.Refs = append(many.Refs, img(4000, 3000))
	}
	for range 3 {
		many.Refs = append(many.Refs, clip(1920, 1080, 12, true))
	}
	many.Refs[9].Media.AudioSeconds = 5
	many.Refs[10].Media.AudioSeconds = 5
	many.Refs[11].Media.AudioSeconds = 5
	return []struct {
		name string
		r    Request
	}{
		{"T2VA 512x512x22", Request{Canvas: cv(512, 512), Frames: 22, PromptTokens: 40}},
		{"T2VA 864x480x56", Request{Canvas: cv(864, 480), Frames: 56, PromptTokens: 100}},
		{"T2VA 960x544x124 (vpipe)", Request{Canvas: cv(960, 544), Frames: 124, PromptTokens: 32}},
		{"T2VA 1344x768x124", Request{Canvas: cv(1344, 768), Frames: 124, PromptTokens: 100}},
		{"T2VA 1344x768x362 (15 s)", Request{Canvas: cv(1344, 768), Frames: 362, PromptTokens: 100}},
		{"FL2VA 544x960x124 first+last", Request{Canvas: cv(544, 960), Frames: 124, PromptTokens: 32, First: "a.png", Last: "b.png"}},
		{"FL2VA 640x480x362 first", Request{Canvas: cv(640, 480), Frames: 362, PromptTokens: 207, First: "a.png"}},
		{"Ref2VA 960x544x56 img+clip+sound", Request{Canvas: cv(960, 544), Frames: 56, PromptTokens: 40, ImagePolicy: layout.PolicyMax,
			Refs: []Reference{img(1024, 1024), clip(1920, 1080, 10, true)}}},
		{"Ref2VA seed: 5x2400px + 7.7 s clip, 160 f", seedRequest(true)},
		{"Ref2VA 9 imgs (official) + 3 clips, 1344x768x362", many},
	}
}

// TestReportTable prints the plan of ten representative requests on four
// machines (official BF16 weights): go test ./engine/plan -run ReportTable -v
// The rows and Qwen columns are the request as asked; a cell names the rows
// after fitting when they differ.
func TestReportTable(t *testing.T) {
	machines := []string{"m5-air-16", "m5-max-64", "m3-ultra-96", "m5-max-128"}
	m := mustModel(t, "official-bf16")
	var b strings.Builder
	fmt.Fprintf(&b, "\n| request | DiT rows | Qwen | %s |\n|---|---:|---:|%s\n", strings.Join(machines, " | "), strings.Repeat("---|", len(machines)))
	for _, c := range representative() {
		var cells []string
		asked, err := Make(c.r, mustMachine(t, machines[0]), m, Options{NoFit: true})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		rows, qwen := asked.DiTRows.Total, asked.TextTokens.Total
		for _, mn := range machines {
			p, err := Make(c.r, mustMachine(t, mn), m, Options{})
			if err != nil {
				t.Fatalf("%s on %s: %v", c.name, mn, err)
			}
			if p.Verdict == Fits && p.Memory.PeakBytes > p.Memory.BudgetBytes {
				t.Errorf("%s on %s: fits over budget", c.name, mn)
			}
			if p.Verdict == Refused && p.Repair == nil {
				t.Errorf("%s on %s: refused without a repair", c.name, mn)
			}
			cell := fmt.Sprintf("%s %.1f GB, %s", p.Verdict, float64(p.Memory.PeakBytes)/(1<<30), hours(p.Time.Seconds))
			if p.DiTRows.Total != rows {
				cell += fmt.Sprintf(", %d rows", p.DiTRows.Total)
			}
			if len(p.Decisions) > 0 {
				cell += " [" + shortKinds(p) + "]"
			}
			if p.Repair != nil {
				cell += " → " + p.Repair.Text
			}
			cells = append(cells, cell)
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s |\n", c.name, rows, qwen, strings.Join(cells, " | "))
	}
	t.Log(b.String())
}

func hours(s float64) string {
	if s >= 3600 {
		return fmt.Sprintf("%.1f h", s/3600)
	}
	return fmt.Sprintf("%.0f min", s/60)
}

var shortNames = map[string]string{
	DecideStreamText: "TE stream", DecideStreamDiT: "DiT stream", DecideStreamVAE: "VAE stream",
	DecideImagePolicy: "img match", DecideImageCap: "img smaller", DecidePoolTemporal: "pool t",
	DecidePoolSpatial: "pool s", DecideShortenClips: "shorten", DecideClipCanvas: "clips smaller", DecideRenderCanvas: "render smaller",
}

func shortKinds(p *Plan) string {
	var out []string
	for _, d := range p.Decisions {
		s := shortNames[d.Kind]
		if d.Kind == DecideRenderCanvas {
			s = "render " + p.RenderCanvas.String()
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}
