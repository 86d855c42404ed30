package app

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyCLI points the CLI's cache at the test run's tiny model, so plan and
// render without -d use it.
func tinyCLI(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CACHE_HOME", e2eCache(t))
	t.Setenv("HOME", e2eCache(t))
}

// oneSentence checks a refusal on the terminal: one line, naming what it
// must, with none of the Go error chain's vocabulary.
func oneSentence(t *testing.T, what, errs string, names ...string) {
	t.Helper()
	if strings.Count(errs, "\n") != 1 {
		t.Errorf("%s: %d lines on stderr, want one: %q", what, strings.Count(errs, "\n"), errs)
	}
	for _, n := range names {
		if !strings.Contains(errs, n) {
			t.Errorf("%s: %q does not name %q", what, errs, n)
		}
	}
	_, msg, _ := strings.Cut(errs, ": ") // after "h3studio plan: "
	for _, chain := range []string{"media:", "engine:", "plan:", "layout:", "stat ", "no such file", "png:", "flate:", "invalid format"} {
		if strings.Contains(msg, chain) {
			t.Errorf("%s: %q carries the error chain's %q", what, errs, chain)
		}
	}
}

// truncatedPNG writes a PNG whose header is whole and whose pixels are
// cut short: its header probes, its decode fails.
func truncatedPNG(t *testing.T, path string) {
	t.Helper()
	var b bytes.Buffer
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes()[:b.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
}

// Bad files are refused before anything loads, with exit 2 and one
// sentence naming the file as it was typed.
func TestCLIBadFiles(t *testing.T) {
	tinyCLI(t)
	dir := t.TempDir()
	t.Chdir(dir)
	truncatedPNG(t, "trunc.png")
	if err := os.WriteFile("fake.png", []byte("not a picture at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.mp4")
	for _, c := range []struct {
		name string
		args []string
		file string
	}{
		{"missing reference", []string{"--ref-image", "missing.png"}, "missing.png"},
		{"missing first frame", []string{"--first-frame", "gone.png"}, "gone.png"},
		{"truncated picture", []string{"--ref-image", "trunc.png"}, "trunc.png"},
		{"truncated anchor", []string{"--first-frame", "trunc.png"}, "trunc.png"},
		{"text named .png", []string{"--ref-image", "fake.png"}, "fake.png"},
	} {
		for _, cmd := range []string{"plan", "render"} {
			args := append([]string{cmd, "-d", TinyModel, "-p", "a fox", "--width", "64", "--height", "64", "--steps", "1", "--ref-image-size", "match"}, c.args...)
			if cmd == "render" {
				args = append(args, "-o", out, "--progress", "none")
			}
			code, _, errs := runCmd(t, args...)
			if code != 2 {
				t.Errorf("%s %s: exit %d, want 2: %q", cmd, c.name, code, errs)
			}
			oneSentence(t, cmd+" "+c.name, errs, c.file)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused render wrote its output")
	}
}

// The window reads the same sentences: file names as the user named them
// (never capitalised), no command-line flag, no path the user did not see.
func TestAdviceFilesForTheWindow(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake.png")
	if err := os.WriteFile(fake, []byte("not a picture at all"), 0o644); err != nil {
		t.Fatal(err)
	}
	trunc := filepath.Join(dir, "trunc.png")
	truncatedPNG(t, trunc)
	for _, r := range []Request{
		{Prompt: "x", References: []Reference{{Kind: RefImage, Path: fake}}},
		{Prompt: "x", References: []Reference{{Kind: RefImage, Path: trunc}}},
		{Prompt: "x", References: []Reference{{Kind: RefImage, Path: filepath.Join(dir, "gone.png")}}},
		{Prompt: "x", FirstFrame: trunc},
	} {
		_, err := PlanRequest(context.Background(), r.WithDefaults())
		if err == nil {
			t.Errorf("%+v: planned", r)
			continue
		}
		got := Advice(err)
		base := filepath.Base(r.FirstFrame)
		if len(r.References) > 0 {
			base = filepath.Base(r.References[0].Path)
		}
		if !strings.Contains(got, base) || strings.Contains(got, dir) || strings.Contains(got, "--") || strings.Contains(got, "\n") {
			t.Errorf("window advice %q: want one sentence naming %s, without its folder or a flag", got, base)
		}
		if strings.HasPrefix(got, strings.ToUpper(base[:1])+base[1:]) {
			t.Errorf("window advice %q capitalises the file name", got)
		}
	}
}

// Numbers the model cannot take are refused, never replaced by a default:
// exit 2 and one sentence naming the flag.
func TestCLIRefusesNumbers(t *testing.T) {
	tinyCLI(t)
	for _, c := range []struct {
		args []string
		flag string
	}{
		{[]string{"--frames", "0"}, "--frames"},
		{[]string{"--frames", "-5"}, "--frames"},
		{[]string{"--frames", "1"}, "--frames"},
		{[]string{"--frames", "400"}, "--frames"},
		{[]string{"--seconds", "0"}, "--seconds"},
		{[]string{"--seconds", "-1"}, "--seconds"},
		{[]string{"--seconds", "20"}, "--seconds"},
		{[]string{"--steps", "0"}, "--steps"},
		{[]string{"--steps", "-2"}, "--steps"},
		{[]string{"--width", "0"}, "--width"},
		{[]string{"--height", "-64"}, "--height"},
		{[]string{"--seed", "-1"}, "--seed"},
	} {
		args := append([]string{"plan", "-d", TinyModel, "-p", "a fox", "--width", "64", "--height", "64"}, c.args...)
		code, out, errs := runCmd(t, args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2: %q %q", c.args, code, out, errs)
		}
		oneSentence(t, strings.Join(c.args, " "), errs, c.flag)
	}
	// The edges the model takes still plan.
	for _, ok := range [][]string{{"--frames", "22"}, {"--frames", "362"}, {"--seconds", "15"}, {"--steps", "1"}, {"--seed", "0"}} {
		if code, _, errs := runCmd(t, append([]string{"plan", "-d", TinyModel, "-p", "a fox", "--width", "64", "--height", "64"}, ok...)...); code != 0 {
			t.Errorf("%v: exit %d: %s", ok, code, errs)
		}
	}
}

// The output canvas is checked the same whatever the preset: a canvas the
// model refuses is reported as typed, never as the preset's smaller
// internal canvas.
func TestCLICanvasIndependentOfPreset(t *testing.T) {
	tinyCLI(t)
	for _, c := range []struct {
		w, h  string
		names []string
	}{
		{"500", "300", []string{"500x300", "multiples of 32", "512x320"}},
		{"4096", "4096", []string{"4096x4096", "16,777,216 pixels", "768x1344 = 1,032,192"}},
	} {
		var first string
		for _, preset := range []string{"", "aggressive", "balanced", "fast"} {
			args := []string{"plan", "-d", TinyModel, "-p", "a fox", "--width", c.w, "--height", c.h}
			if preset != "" {
				args = append(args, "--preset", preset)
			}
			code, _, errs := runCmd(t, args...)
			what := c.w + "x" + c.h + " " + preset
			if code != 2 {
				t.Errorf("%s: exit %d, want 2: %q", what, code, errs)
			}
			oneSentence(t, what, errs, c.names...)
			if strings.Contains(errs, "render canvas") || strings.Contains(errs, "166x100") || strings.Contains(errs, "2560") {
				t.Errorf("%s: %q reports the preset's internal canvas", what, errs)
			}
			if preset == "" {
				first = errs
			} else if errs != first {
				t.Errorf("%s: %q, without a preset %q", what, errs, first)
			}
		}
	}
	// Scripts read the same sentence in plan --json.
	_, out, _ := runCmd(t, "plan", "-d", TinyModel, "-p", "a fox", "--width", "500", "--height", "300", "--preset", "aggressive", "--json")
	if e, _ := decodePlan(t, out)["error"].(string); !strings.HasPrefix(e, "canvas 500x300: width and height must be multiples of 32") {
		t.Errorf("plan --json error %q", e)
	}
	// A canvas the model takes still runs the preset's smaller one.
	code, out, errs := runCmd(t, "plan", "-d", TinyModel, "-p", "a fox", "--width", "512", "--height", "512", "--preset", "aggressive")
	if code != 0 || !strings.Contains(out, "canvas 512x512 (model runs at 320x320)") {
		t.Errorf("aggressive 512x512: exit %d\n%s%s", code, out, errs)
	}
}

// The official pipeline passes the prompt to Qwen verbatim, untruncated:
// a long prompt is planned whole, with a warning before anything loads
// when its text rows outnumber the clip's own, and one longer than the
// text encoder's context is refused.
func TestCLILongPrompt(t *testing.T) {
	tinyCLI(t)
	long := strings.Repeat("a ", 60000) // 120,000 characters: 60,001 tokens
	code, out, errs := runCmd(t, "plan", "-d", TinyModel, "-p", long, "--width", "64", "--height", "64")
	if code != 0 || !strings.Contains(out, "warning: the prompt is 60,001 tokens") || !strings.Contains(out, "shorten the prompt") {
		t.Errorf("long prompt: exit %d, %q\n%s", code, errs, out)
	}
	code, out, _ = runCmd(t, "plan", "-d", TinyModel, "-p", "a red fox runs through fresh snow at dawn", "--width", "64", "--height", "64")
	if code != 0 || strings.Contains(out, "warning:") {
		t.Errorf("short prompt warned: exit %d\n%s", code, out)
	}
	// Past the context: too long for a command line, so through the
	// renderer's planning path, which the window's plan takes too.
	rd := &Renderer{CacheDir: e2eCache(t), DefaultModel: TinyModel}
	defer rd.Close()
	_, err := rd.Plan(context.Background(), Request{Prompt: strings.Repeat("a ", 270000), Width: 64, Height: 64})
	var req *RequestError
	if !errors.As(err, &req) || !strings.Contains(Advice(err), "262,144") || strings.Contains(Advice(err), "\n") {
		t.Errorf("prompt over the context: %v (advice %q)", err, Advice(err))
	}
}

// A sentence the window shows names no command-line flag; the terminal's
// version of it does, so the user knows what to change.
func TestAdviceFlagsOnlyOnTheTerminal(t *testing.T) {
	dir := t.TempDir()
	rd := &Renderer{CacheDir: e2eCache(t), DefaultModel: TinyModel}
	defer rd.Close()
	ctx := context.Background()
	for _, c := range []struct {
		name string
		r    Request
		flag string
	}{
		{"no output", Request{Prompt: "x"}, "-o"},
		{"output folder missing", Request{Prompt: "x", Output: filepath.Join(dir, "none", "a.mp4")}, "-o"},
		{"profile model", Request{Prompt: "x", Model: "official-bf16", Output: filepath.Join(dir, "a.mp4")}, "-d"},
		{"model not a folder", Request{Prompt: "x", Model: filepath.Join(dir, "nope"), Output: filepath.Join(dir, "a.mp4")}, "-d"},
		{"not a snapshot", Request{Prompt: "x", Model: dir, Output: filepath.Join(dir, "a.mp4")}, "-d"},
		{"bad steps", Request{Prompt: "x", Steps: 5000, Output: filepath.Join(dir, "a.mp4")}, "--steps"},
	} {
		_, err := rd.Prepare(ctx, c.r)
		if err == nil {
			t.Errorf("%s: prepared", c.name)
			continue
		}
		w, term := Advice(err), TerminalAdvice(err)
		if strings.Contains(w, " -") || strings.Contains(w, "(-") || strings.Contains(w, "weights:") {
			t.Errorf("%s: window advice %q names a flag or the error chain", c.name, w)
		}
		if !strings.Contains(term, c.flag) {
			t.Errorf("%s: terminal advice %q does not name %s", c.name, term, c.flag)
		}
	}
}

// A picture damaged after the plan checked it (replaced between plan and
// render) fails the render with the same sentence, naming the file, not
// the engine's error chain.
func TestRenderDamagedAfterPlan(t *testing.T) {
	rd := newRenderer(t)
	dir := t.TempDir()
	pic := filepath.Join(dir, "pic.png")
	writePNG(t, pic, 64, 64)
	r := tinyRequest(t, "late.mp4")
	r.Steps = 1
	r.References = []Reference{{Kind: RefImage, Path: pic}}
	job, err := rd.Prepare(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	truncatedPNG(t, pic)
	_, err = job.Run(context.Background(), nil)
	if err == nil {
		t.Fatal("a damaged picture rendered")
	}
	msg := TerminalAdvice(renderExit(err))
	if !strings.Contains(msg, pic) || strings.Contains(msg, "engine:") || strings.Contains(msg, "png:") {
		t.Errorf("render of a damaged picture: %q", msg)
	}
	if w := Advice(err); !strings.HasPrefix(w, "The file pic.png is damaged") {
		t.Errorf("window: %q", w)
	}
}

// Without a usable FFmpeg a render is refused before it starts (exit 2,
// one sentence), not after minutes of frames it could not write.
func TestCLIRenderNeedsFFmpegFirst(t *testing.T) {
	tinyCLI(t)
	dir := t.TempDir()
	t.Setenv("PATH", t.TempDir()) // no ffmpeg, no ffprobe
	out := filepath.Join(dir, "out.mp4")
	hist := filepath.Join(dir, "history")
	code, _, errs := runCmd(t, "render", "-d", TinyModel, "-p", "a fox", "--width", "64", "--height", "64", "--steps", "1",
		"-o", out, "--progress", "none", "--history", hist)
	if code != 2 {
		t.Errorf("exit %d, want 2: %q", code, errs)
	}
	oneSentence(t, "render without FFmpeg", errs, "FFmpeg")
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused render wrote its output")
	}
	if _, err := os.Stat(hist); err == nil {
		t.Error("the refused render reached the history")
	}
}
