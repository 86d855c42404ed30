package layout

import (
	"encoding/json"
	"math"
	"os"
	"testing"
)

// releaseLayouts is tools/fixtures/e2e/testdata/release_layout.json: ComfyUI's
// PackedLayout on release-size requests whose latent sizes the official
// (SGLang) functions computed (layout_gen.py beside it).
type releaseLayouts struct {
	Cases []struct {
		Name    string `json:"name"`
		Request struct {
			Width, Height, Frames int
			Keys                  []int `json:"keys"`
			Refs                  []struct {
				Kind         string  `json:"kind"`
				Width        int     `json:"width"`
				Height       int     `json:"height"`
				Frames       int     `json:"frames"`
				Seconds      float64 `json:"seconds"`
				AudioSeconds float64 `json:"audio_seconds"`
			} `json:"refs"`
		} `json:"request"`
		Text   int          `json:"text"`
		Rows   int          `json:"rows"`
		Sample [][4]float64 `json:"sample"` // row index, t, h, w
	} `json:"cases"`
}

// TestReleaseLayoutMatchesReference builds each request with layout.Build and
// compares the row count and the sampled RoPE positions with the
// reference's, both sides re-based to their own text length (a free
// parameter: the reference's is fixed, ours follows the presentation).
func TestReleaseLayoutMatchesReference(t *testing.T) {
	data, err := os.ReadFile("../../tools/fixtures/e2e/testdata/release_layout.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref releaseLayouts
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) != 5 {
		t.Fatalf("%d cases in the fixture", len(ref.Cases))
	}
	for _, c := range ref.Cases {
		t.Run(c.Name, func(t *testing.T) {
			s := Spec{Canvas: Canvas{c.Request.Width, c.Request.Height}, Frames: c.Request.Frames, PromptTokens: 12}
			for _, k := range c.Request.Keys {
				s.First = s.First || k == 0
				s.Last = s.Last || k == -1
			}
			for _, r := range c.Request.Refs {
				kind, err := ParseRefKind(r.Kind)
				if err != nil {
					t.Fatal(err)
				}
				lr := Ref{Kind: kind, Source: Canvas{r.Width, r.Height}, SourceFrames: r.Frames, Policy: PolicyOfficial}
				switch kind {
				case RefAudio:
					lr.AudioSeconds, lr.AudioRate = r.Seconds, AudioSampleRate
				case RefVideoAudio:
					lr.AudioSeconds = r.AudioSeconds
				}
				s.Refs = append(s.Refs, lr)
			}
			l, err := Build(s)
			if err != nil {
				t.Fatal(err)
			}
			text := l.Segments[0].Rows
			if got := l.Rows - text + c.Text; got != c.Rows {
				t.Fatalf("%d rows (text re-based), the reference %d", got, c.Rows)
			}
			pos := l.Positions()
			var worst float64
			for _, r := range c.Sample {
				i := int(r[0])
				if i < c.Text {
					continue // text rows sit at (i, 0, 0) on both sides
				}
				p := pos[i-c.Text+text]
				want := [3]float64{r[1] - float64(c.Text) + float64(text), r[2], r[3]}
				for a := range 3 {
					worst = math.Max(worst, math.Abs(p[a]-want[a]))
				}
			}
			t.Logf("%d rows, %d sampled, worst position difference %.1e", c.Rows, len(c.Sample), worst)
			if worst > 1e-9 {
				t.Errorf("positions differ from the reference's by up to %.3e", worst)
			}
		})
	}
}
