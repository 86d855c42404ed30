package ui

import (
	"bytes"
	"encoding/json"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"fyne.io/fyne/v2/test"

	"h3studio/app"
	"h3studio/engine/plan"
)

// TestOnePlanEverywhere: one request gives one plan (peak bytes, DiT rows,
// Qwen tokens, and the rest of it) from `h3studio plan -d DIR --json`, from
// the history entry of `h3studio render`, and from the window's planning
// function as DefaultConfig wires it.
func TestOnePlanEverywhere(t *testing.T) {
	for _, b := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed (make test installs it)", b)
		}
	}
	work := t.TempDir()
	t.Setenv("HOME", work) // DefaultConfig's clip folder, the CLI's cache
	t.Setenv("XDG_CACHE_HOME", filepath.Join(work, "cache"))
	model := filepath.Join(work, "tiny")
	still := filepath.Join(work, "still.png")
	writePNG(t, still, image.NewGray(image.Rect(0, 0, 96, 64)))
	cli := func(args ...string) []byte {
		t.Helper()
		var out, errb bytes.Buffer
		if code := app.Main(args, &out, &errb); code != 0 {
			t.Fatalf("h3studio %v: exit %d: %s", args, code, errb.String())
		}
		return out.Bytes()
	}
	cli("tiny-model", "--out", model)
	req := app.Request{Model: model, Prompt: "a red fox runs through fresh snow at dawn", Width: 64, Height: 64, Frames: 22,
		Steps: 1, Machine: "m5-max-128", RefImageSize: "match", Output: filepath.Join(work, "out.mp4"),
		References: []app.Reference{{Kind: app.RefImage, Path: still}}}
	flags := []string{"-d", model, "-p", req.Prompt, "--width", "64", "--height", "64", "--frames", "22", "--steps", "1",
		"--machine", req.Machine, "--ref-image-size", "match", "--ref-image", still}

	var fromPlan plan.Plan
	if err := json.Unmarshal(cli(append([]string{"plan", "--json"}, flags...)...), &fromPlan); err != nil {
		t.Fatal(err)
	}
	hist := filepath.Join(work, "history")
	cli(append([]string{"render", "--progress", "none", "--threads", "1", "--history", hist, "-o", req.Output}, flags...)...)
	entries, err := os.ReadDir(hist)
	if err != nil || len(entries) != 1 {
		t.Fatalf("history holds %d entries (%v), want 1", len(entries), err)
	}
	var entry struct{ Plan plan.Plan }
	if raw, err := os.ReadFile(filepath.Join(hist, entries[0].Name())); err != nil || json.Unmarshal(raw, &entry) != nil {
		t.Fatalf("history entry %s: %v", entries[0].Name(), err)
	}
	cfg, closeCore := DefaultConfig(test.NewTempApp(t))
	defer closeCore()
	fromWindow, err := cfg.Plan(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}

	want := summary(&fromPlan)
	if want.peak == 0 || want.rows == 0 || want.tokens == 0 {
		t.Fatalf("plan -d: %+v", want)
	}
	for name, p := range map[string]*plan.Plan{"render's history entry": &entry.Plan, "the window": fromWindow} {
		if got := summary(p); got != want {
			t.Errorf("%s planned %+v, plan -d %+v", name, got, want)
		}
		if a, b := mustJSON(t, p), mustJSON(t, &fromPlan); a != b {
			t.Errorf("%s's plan differs from plan -d's:\n%s\n%s", name, a, b)
		}
	}
}

type planSummary struct {
	peak         int64
	rows, tokens int
}

func summary(p *plan.Plan) planSummary {
	return planSummary{p.Memory.PeakBytes, p.DiTRows.Total, p.TextTokens.Total}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
