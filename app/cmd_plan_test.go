package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"h3studio/engine/plan"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestRequestFlagsKeepOrder(t *testing.T) {
	var r Request
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	bindRequestFlags(fs, &r)
	args := []string{"-d", "official-q8_0", "-p", "a fox", "--width", "864", "-height", "480", "--seconds", "5",
		"--ref-image", "a.png", "--ref-silent-video", "b.mp4", "--ref-audio", "c.wav", "--ref-image", "d.png",
		"--ref-video-audio", "e.mp4", "f.wav", "--ref-video", "g.mov", "--ref-video-audio=h.mp4", "i.wav", "--machine", "m3-ultra-96"}
	if err := parseRequestFlags(fs, &r, args); err != nil {
		t.Fatal(err)
	}
	want := []Reference{{RefImage, "a.png", ""}, {RefVideo, "b.mp4", ""}, {RefAudio, "c.wav", ""}, {RefImage, "d.png", ""},
		{RefVideoAudio, "e.mp4", "f.wav"}, {RefVideoAudio, "g.mov", ""}, {RefVideoAudio, "h.mp4", "i.wav"}}
	if len(r.References) != len(want) {
		t.Fatalf("references %+v", r.References)
	}
	for i := range want {
		if r.References[i] != want[i] {
			t.Errorf("reference %d = %+v, want %+v", i, r.References[i], want[i])
		}
	}
	if r.Model != "official-q8_0" || r.Prompt != "a fox" || r.Width != 864 || r.Height != 480 || r.RequestedFrames() != 120 || r.Machine != "m3-ultra-96" {
		t.Errorf("request %+v", r)
	}
	for _, bad := range [][]string{
		{"--frames", "22", "--seconds", "2"},
		{"--render-width", "320"},
		{"--reuse", "2", "--core-reuse", "4"},
		{"--first-frame", "a.png", "--ref-image", "b.png"},
		{"--ref-video-audio", "only.mp4"},
		{"stray"},
	} {
		var r Request
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		bindRequestFlags(fs, &r)
		var ue *UsageError
		if err := parseRequestFlags(fs, &r, bad); !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", bad, err)
		}
	}
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func decodePlan(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not one JSON object: %v: %q", err, s)
	}
	return m
}

func num(m map[string]any, path ...string) float64 {
	var v any = m
	for _, k := range path {
		v = v.(map[string]any)[k]
	}
	f, _ := v.(float64)
	return f
}

// The plan --json contract (ARCHITECTURE.md) on the vpipe 64 GB case.
func TestPlanCommandJSON(t *testing.T) {
	code, out, errs := runCmd(t, "plan", "--model", "official-bf16", "--machine", "m5-max-64", "--width", "960", "--height", "544",
		"--frames", "124", "-p", "a red fox runs through snow", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	p := decodePlan(t, out)
	for _, k := range []string{"task", "canvas", "frames", "text_tokens", "references", "dit_rows", "memory", "decisions", "verdict", "error", "warnings"} {
		if _, ok := p[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	for _, k := range []string{"prompt", "labels", "vision", "total"} {
		if _, ok := p["text_tokens"].(map[string]any)[k]; !ok {
			t.Errorf("text_tokens lacks %q", k)
		}
	}
	phases := p["memory"].(map[string]any)["phases"].([]any)
	for _, k := range []string{"name", "peak_bytes", "weights_bytes", "scratch_bytes", "residency"} {
		if _, ok := phases[1].(map[string]any)[k]; !ok {
			t.Errorf("phase lacks %q", k)
		}
	}
	if p["task"] != "t2va" || p["verdict"] != "fits" || num(p, "frames") != 124 || num(p, "dit_rows", "video") != 18870 || num(p, "dit_rows", "audio") != 414 {
		t.Errorf("plan %s", out)
	}
	if num(p, "memory", "peak_bytes") > num(p, "memory", "budget_bytes") {
		t.Error("peak over budget")
	}
}

// A preset changes the plan the way it changes the render: its step count
// unless --steps is given, and its internal canvas.
func TestPlanCommandPreset(t *testing.T) {
	forwards := func(args ...string) float64 {
		t.Helper()
		code, out, errs := runCmd(t, append([]string{"plan", "--model", "official-bf16", "--machine", "m5-max-128", "-p", "a fox", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("plan %v: exit %d: %s", args, code, errs)
		}
		return num(decodePlan(t, out), "time", "forwards")
	}
	var fast float64
	for _, p := range Presets {
		if p.Name == "fast" {
			fast = float64(p.Steps)
		}
	}
	if got := forwards(); got != plan.DefaultSteps {
		t.Errorf("no preset: %v forwards, want %d", got, plan.DefaultSteps)
	}
	if got := forwards("--preset", "fast"); got != fast || fast == 0 {
		t.Errorf("--preset fast: %v forwards, want the preset's %v", got, fast)
	}
	if got := forwards("--preset", "fast", "--steps", "9"); got != 9 {
		t.Errorf("--preset fast --steps 9: %v forwards, want 9", got)
	}
	if code, _, errs := runCmd(t, "plan", "-d", TinyModel, "--preset", "nope", "-p", "x"); code != 2 || !strings.Contains(errs, "unknown preset") {
		t.Errorf("unknown preset: exit %d, %q", code, errs)
	}
}

func writePNG(t *testing.T, path string, w, h int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
}

// Five 2400 px photos and a clip, headers probed from real files, sized as
// the official pipeline does: the photos to a 2048-pixel short edge, the
// clip to the 768-class canvas of its aspect.
func TestPlanCommandReferences(t *testing.T) {
	dir := t.TempDir()
	args := []string{"plan", "--model", "official-bf16", "--machine", "m3-ultra-96", "--width", "864", "--height", "480", "--frames", "160", "--json"}
	for i := range 5 {
		p := filepath.Join(dir, "photo"+string(rune('1'+i))+".png")
		writePNG(t, p, 2400, 1600)
		args = append(args, "--ref-image", p)
	}
	withClip := false
	if _, err := exec.LookPath("ffmpeg"); err == nil {
		clip := filepath.Join(dir, "clip.mp4")
		out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size=360x640:rate=24",
			"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=32000", "-t", "3", "-pix_fmt", "yuv420p", "-shortest", clip).CombinedOutput()
		if err != nil {
			t.Fatalf("ffmpeg: %v: %s", err, out)
		}
		args = append(args, "--ref-video", clip)
		withClip = true
	} else {
		t.Log("ffmpeg not on PATH: planning the images only")
	}
	code, out, errs := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	p := decodePlan(t, out)
	refs := p["references"].([]any)
	for i := range 5 {
		r := refs[i].(map[string]any)
		c, from := r["canvas"].(map[string]any), r["scaled_from"].(map[string]any)
		if c["width"] != 3072.0 || c["height"] != 2048.0 || from["width"] != 2400.0 || r["qwen_tokens"] != 6152.0 {
			t.Errorf("image %d: %v", i, r)
		}
	}
	if withClip {
		r := refs[5].(map[string]any)
		// 360x640 is enlarged to 768x1344 (1008 rows a latent); of 72 frames
		// the VAE keeps 56 = 17*3+5, 17 latents; the 3 s soundtrack is 120
		// latents a channel.
		if r["kind"] != "video+audio" || r["dit_rows"] != 17.0*1008+240 || r["frames"] != 72.0 || r["vae_frames"] != 56.0 {
			t.Errorf("clip: %v", r)
		}
	}
	if p["verdict"] != "fits" || p["task"] != "ref2va" {
		t.Errorf("verdict %v %v", p["verdict"], p["error"])
	}
	// The same request as a readable table.
	var table []string
	for _, a := range args {
		if a != "--json" {
			table = append(table, a)
		}
	}
	code, out, errs = runCmd(t, append(table, "--no-fit")...)
	if code != 0 || !strings.Contains(out, "verdict: fits") || !strings.Contains(out, "from 2400x1600") {
		t.Errorf("table: exit %d\n%s%s", code, out, errs)
	}
}

// A request that cannot fit exits 1, says why and what would fit, and the
// repair it names does fit.
func TestPlanCommandRefusal(t *testing.T) {
	base := []string{"plan", "--model", "official-bf16", "--machine", "m1-air-8", "--width", "1344", "--height", "768", "-p", "x"}
	code, out, errs := runCmd(t, append(base, "--frames", "362", "--json")...)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s", code, errs)
	}
	p := decodePlan(t, out)
	rep, _ := p["repair"].(map[string]any)
	if p["verdict"] != "refused" || rep == nil || !strings.Contains(errs, "use ") || !strings.Contains(errs, "does not fit this Mac: it needs ") {
		t.Fatalf("plan %s / %s", out, errs)
	}
	frames, _ := rep["frames"].(float64)
	if frames == 0 {
		t.Fatalf("repair has no frame count: %v", rep)
	}
	code, out, errs = runCmd(t, append(base, "--frames", strconv.Itoa(int(frames)))...)
	if code != 0 || !strings.Contains(out, "verdict: fits") {
		t.Errorf("repair applied: exit %d\n%s%s", code, out, errs)
	}
	// A rule, not memory: a bad request, one line on stderr, exit 2 (as
	// render exits for it). Without -d the plan
	// is the tiny model's, which lands in the user's cache folder.
	t.Setenv("XDG_CACHE_HOME", e2eCache(t))
	t.Setenv("HOME", e2eCache(t))
	code, _, errs = runCmd(t, "plan", "-d", TinyModel, "--width", "1344", "--height", "800")
	if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "768x1344") {
		t.Errorf("bad canvas: exit %d %q", code, errs)
	}
}
