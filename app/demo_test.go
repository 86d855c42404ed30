package app

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/engine/weights"
	"h3studio/models/demo"
)

// embeddedDeclaration is the demo snapshot's h3studio.json as committed,
// so these tests follow the model when it is retrained.
func embeddedDeclaration(t *testing.T) weights.Declared {
	t.Helper()
	raw, err := fs.ReadFile(demo.Snapshot(), weights.DeclarationFile)
	if err != nil {
		t.Fatal(err)
	}
	var d weights.Declared
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if d.Canvas.Width == 0 || d.Frames == 0 || d.Steps == 0 || len(d.Presets) == 0 {
		t.Fatalf("the demo model declares %+v; these tests need its canvas, frames, steps and presets", d)
	}
	return d
}

// demoCLI points the CLI's cache at a fresh folder, so the demo model is
// extracted there and no other test's cache is read.
func demoCLI(t *testing.T) string {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	return cache
}

func planJSON(t *testing.T, args ...string) *plan.Plan {
	t.Helper()
	code, out, errs := runCmd(t, append([]string{"plan", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("plan %v: exit %d: %s", args, code, errs)
	}
	var p plan.Plan
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

// Without -d, plan is the demo model's, at the canvas, length and steps
// its h3studio.json declares; flags and presets win over them.
func TestPlanDefaultIsDemoModel(t *testing.T) {
	d := embeddedDeclaration(t)
	cache := demoCLI(t)
	p := planJSON(t, "-p", "a red circle moves right")
	want := layout.Canvas{Width: d.Canvas.Width, Height: d.Canvas.Height}
	if p.Canvas != want || p.Frames != layout.AlignFrames(d.Frames) || p.Time.Forwards != d.Steps {
		t.Errorf("plan without -d: canvas %s, %d frames, %d forwards; want the demo's %s, %d, %d",
			p.Canvas, p.Frames, p.Time.Forwards, want, layout.AlignFrames(d.Frames), d.Steps)
	}
	dirs, _ := filepath.Glob(filepath.Join(cache, "h3studio", "models", "demo-*"))
	if len(dirs) != 1 {
		t.Errorf("the demo model was not extracted into the cache: %v", dirs)
	}
	p = planJSON(t, "-p", "x", "--width", "64", "--height", "96", "--frames", "22", "--steps", "3")
	if p.Canvas != (layout.Canvas{Width: 64, Height: 96}) || p.Frames != 22 || p.Time.Forwards != 3 {
		t.Errorf("flags: canvas %s, %d frames, %d forwards; want 64x96, 22, 3", p.Canvas, p.Frames, p.Time.Forwards)
	}
	last := d.Presets[len(d.Presets)-1]
	p = planJSON(t, "-p", "x", "--preset", strings.ToLower(last.Name))
	if p.Time.Forwards != last.Steps {
		t.Errorf("--preset %s: %d forwards, want the declared %d", last.Name, p.Time.Forwards, last.Steps)
	}
	// The release's presets are not the demo model's.
	code, _, errs := runCmd(t, "plan", "-p", "x", "--preset", "aggressive")
	if code != 2 || !strings.Contains(errs, `unknown preset "aggressive"`) || !strings.Contains(errs, strings.ToLower(d.Presets[0].Name)) {
		t.Errorf("--preset aggressive on the demo model: exit %d %q, want refused with the model's presets", code, errs)
	}
}

// Without -d, render makes the demo model's clip, and the history keeps
// the canvas and length it was made at.
func TestRenderDefaultIsDemoModel(t *testing.T) {
	needFFmpeg(t)
	d := embeddedDeclaration(t)
	demoCLI(t)
	out := filepath.Join(t.TempDir(), "demo.mp4")
	hist := t.TempDir()
	code, _, errs := runCmd(t, "render", "-p", "a red circle moves right on a black background", "-o", out,
		"--progress", "none", "--history", hist, "--steps", "2")
	if code != 0 {
		t.Fatalf("render without -d: exit %d: %s", code, errs)
	}
	checkMP4(t, out, d.Canvas.Width, d.Canvas.Height, layout.AlignFrames(d.Frames))
	h, err := OpenHistory(hist)
	if err != nil {
		t.Fatal(err)
	}
	list, err := h.List()
	if err != nil || len(list) != 1 {
		t.Fatalf("history: %d entries, %v", len(list), err)
	}
	var r Request
	if err := json.Unmarshal(list[0].Request, &r); err != nil {
		t.Fatal(err)
	}
	if r.Model != "" || r.Width != d.Canvas.Width || r.Height != d.Canvas.Height || r.Frames != d.Frames || r.Steps != 2 {
		t.Errorf("history request %+v; want no model, the demo's %dx%d and %d frames, 2 steps", r, d.Canvas.Width, d.Canvas.Height, d.Frames)
	}
}

// declaredTiny is a fresh tiny snapshot declaring only a reference short
// edge, so its cost is the tiny model's and only the sizing differs.
func declaredTiny(t *testing.T, declaration string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := weights.WriteTiny(dir, weights.TinyOptions{Seed: 1, Aligned16: true}); err != nil {
		t.Fatal(err)
	}
	if declaration != "" {
		if err := os.WriteFile(filepath.Join(dir, weights.DeclarationFile), []byte(declaration), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// phoneClip writes a 1080x1920 clip with sound, as a phone records.
func phoneClip(t *testing.T, path string, seconds string) {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=1080x1920:rate=24",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000", "-t", seconds, "-c:v", "libx264", "-preset", "ultrafast",
		"-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
}

// A model declaring reference_short_edge has its phone clip and photo
// planned at most that short edge; the same model without the
// declaration plans the release's canvases.
func TestDeclaredReferenceShortEdge(t *testing.T) {
	rd := newRenderer(t)
	dir := t.TempDir()
	clip, photo := filepath.Join(dir, "phone.mp4"), filepath.Join(dir, "photo.png")
	phoneClip(t, clip, "3")
	writePNG(t, photo, 2400, 1600)
	const edge = 128
	r := Request{Prompt: "a fox", Width: 128, Height: 128, Frames: 56, Steps: 1,
		References: []Reference{{Kind: RefVideoAudio, Path: clip}, {Kind: RefImage, Path: photo}}}
	for _, c := range []struct {
		declaration string
		want        []layout.Canvas
	}{
		{`{"reference_short_edge": 128}`, []layout.Canvas{{Width: 128, Height: 224}, {Width: 192, Height: 128}}},
		{"", []layout.Canvas{{Width: 768, Height: 1344}, {Width: 3072, Height: 2048}}},
	} {
		r.Model = declaredTiny(t, c.declaration)
		p, err := rd.Plan(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range c.want {
			got := p.References[i].Canvas
			if got != want {
				t.Errorf("declaration %q: reference %d canvas %s, want %s", c.declaration, i+1, got, want)
			}
			if c.declaration != "" && min(got.Width, got.Height) > edge {
				t.Errorf("reference %d canvas %s exceeds the declared %d px short edge", i+1, got, edge)
			}
		}
	}
}

// A snapshot that declares nothing has the release's defaults.
func TestUndeclaredDefaultsAreTheRelease(t *testing.T) {
	d := declaredDefaults(nil)
	if d.Declared || d.Width != DefaultWidth || d.Height != DefaultHeight || d.Frames != DefaultFrames ||
		d.Steps != plan.DefaultSteps || len(d.Presets) != len(Presets) || d.VideoShift != 0 {
		t.Errorf("undeclared defaults %+v, want the release's", d)
	}
}

// A snapshot whose h3studio.json is malformed is refused at the plan in
// one sentence naming the file and what to do.
func TestBadDeclarationRefused(t *testing.T) {
	dir := declaredTiny(t, `{"canvas": {"width": 100, "height": 128}}`)
	code, _, errs := runCmd(t, "plan", "-d", dir, "-p", "x")
	oneSentence(t, "bad h3studio.json", errs, filepath.Join(dir, weights.DeclarationFile), "100x128", "remove the file")
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
}
