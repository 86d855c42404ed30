package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/arch"
	"h3studio/engine/lora"
	"h3studio/engine/lora/loratest"
	"h3studio/engine/weights/safetensors"
)

// tinyLoRA writes a rank-2 bare PEFT adapter over the tiny DiT named
// name (loratest.Tiny); widen > 0 makes it a misfit.
func tinyLoRA(t *testing.T, name string, widen int) string { return loratest.Tiny(t, name, widen) }

func TestLoRAFlag(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var r Request
	bindRequestFlags(fs, &r)
	err := fs.Parse([]string{"--lora", "turbo.safetensors", "--lora", "style.safetensors:0.6", "--lora", "a:b.safetensors",
		"--lora", "neg.safetensors:-1", "--lora", "ds.safetensors:0.8:interleaved", "--lora", "f.safetensors:flat"})
	if err != nil {
		t.Fatal(err)
	}
	want := []LoRA{{Path: "turbo.safetensors", Strength: 1}, {Path: "style.safetensors", Strength: 0.6},
		{Path: "a:b.safetensors", Strength: 1}, {Path: "neg.safetensors", Strength: -1},
		{Path: "ds.safetensors", Strength: 0.8, QKV: "interleaved"}, {Path: "f.safetensors", Strength: 1, QKV: "flat"}}
	if !reflect.DeepEqual(r.LoRAs, want) {
		t.Errorf("--lora gave %+v, want %+v", r.LoRAs, want)
	}
	r.LoRAs = append(r.LoRAs, LoRA{Path: "x.safetensors", Strength: 11}, LoRA{Path: "y.safetensors", Strength: 1, QKV: "sideways"})
	if err := r.Validate(); err == nil || !strings.Contains(TerminalAdvice(err), "sideways") || !strings.Contains(TerminalAdvice(err), "11") {
		t.Errorf("a strength of 11 and a qkv layout sideways: %v", err)
	}
}

// A LoRA that does not fit, or a file that is none, is refused by plan and
// render with exit 2 and one sentence naming the file, and nothing is
// written; info --lora prints the coverage and exits 2 too.
func TestCLILoRAMisfit(t *testing.T) {
	tinyCLI(t)
	dir := t.TempDir()
	misfit := tinyLoRA(t, "wide.safetensors", 8)
	notLoRA := filepath.Join(dir, "weights.safetensors")
	w := &safetensors.Writer{}
	if err := w.AddFloat32("blocks.0.mlp.fc2.weight", safetensors.F32, []int64{2, 2}, []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(notLoRA); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.mp4")
	for _, file := range []string{misfit, notLoRA, filepath.Join(dir, "missing.safetensors")} {
		for _, cmd := range []string{"plan", "render"} {
			args := []string{cmd, "-d", TinyModel, "-p", "a fox", "--width", "64", "--height", "64", "--steps", "1", "--lora", file + ":0.5"}
			if cmd == "render" {
				args = append(args, "-o", out, "--progress", "none")
			}
			code, _, errs := runCmd(t, args...)
			if code != 2 {
				t.Errorf("%s --lora %s: exit %d, want 2: %q", cmd, filepath.Base(file), code, errs)
			}
			oneSentence(t, cmd+" "+filepath.Base(file), errs, file)
			if strings.Contains(errs, "lora:") {
				t.Errorf("%q carries the error chain", errs)
			}
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused render wrote its output")
	}
	tiny, err := engine.TinyModelDir(e2eCache(t))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, errs := runCmd(t, "info", "-d", tiny, "--lora", misfit)
	if code != 2 || !strings.Contains(stdout, "attn.qkv_proj") || !strings.Contains(errs, "does not fit") {
		t.Errorf("info --lora on a misfit: exit %d, %q, %q", code, stdout, errs)
	}
	code, stdout, errs = runCmd(t, "info", "-d", tiny, "--lora", tinyLoRA(t, "ok.safetensors", 0), "--json")
	var rep loraReport
	if err := json.Unmarshal([]byte(stdout), &rep); code != 0 || err != nil || !rep.Fits || rep.Coverage.Matched() != 19 {
		t.Errorf("info --lora --json: exit %d (%q), %v, %+v", code, errs, err, rep)
	}
}

// A clip rendered with a LoRA records its file, SHA-256 and strength in
// the MP4's request and in the history, and restores them; at strength 0
// it renders the base's frames.
func TestRenderLoRARecorded(t *testing.T) {
	rd := newRenderer(t)
	path := tinyLoRA(t, "turbo.safetensors", 0)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	frames := func(name string, ls []LoRA) []string {
		r := tinyRequest(t, name+".mp4")
		r.LoRAs = ls
		r.FramesDir = filepath.Join(t.TempDir(), "frames")
		render(t, rd, r)
		pngs, err := filepath.Glob(filepath.Join(r.FramesDir, "*.png"))
		if err != nil || len(pngs) != 22 {
			t.Fatalf("%d frames (%v)", len(pngs), err)
		}
		var out []string
		for _, p := range pngs {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
		if ls != nil {
			got, ok, err := RequestFromClip(context.Background(), r.Output)
			want := []LoRA{{Path: path, Strength: ls[0].Strength, SHA256: hex.EncodeToString(sum[:])}}
			if err != nil || !ok || !reflect.DeepEqual(got.LoRAs, want) {
				t.Errorf("the clip restores LoRAs %+v (%v), want %+v", got.LoRAs, err, want)
			}
		}
		return out
	}
	base := frames("base", nil)
	if !reflect.DeepEqual(frames("zero", []LoRA{{Path: path, Strength: 0}}), base) {
		t.Error("--lora FILE:0 rendered other frames than no LoRA")
	}
	if reflect.DeepEqual(frames("half", []LoRA{{Path: path, Strength: 0.5}}), base) {
		t.Error("--lora FILE:0.5 rendered the base's frames")
	}

	hist, err := OpenHistory(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	q := NewQueue(hist, func(context.Context, Request, engine.Sink) (string, error) { return "", io.EOF }, nil)
	defer q.Close()
	r := tinyRequest(t, "queued.mp4")
	r.LoRAs = []LoRA{{Path: path, Strength: 0.8}}
	id, err := q.Submit(r)
	if err != nil {
		t.Fatal(err)
	}
	e, err := hist.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.DecodeRequest()
	if err != nil || len(got.LoRAs) != 1 || got.LoRAs[0].SHA256 != hex.EncodeToString(sum[:]) || got.LoRAs[0].Strength != 0.8 {
		t.Errorf("the history holds LoRAs %+v (%v)", got.LoRAs, err)
	}
}

func TestTurboFor(t *testing.T) {
	for name, want := range map[string]Turbo{
		"minimax_h3_turbo_v4_step600_ema.safetensors":               {"larryvrh Turbo v4-600", "fl2va", 6, 12, 3},
		"minimax_h3_turbo_4step_ema_ckpt850.safetensors":            {"larryvrh Turbo v1-850", "fl2va", 4, 12, 3},
		"minimax_h3_fl2v_turbo_4step_v1.2_768p.safetensors":         {"lightx2v FL2VA Turbo 4-step 768p", "fl2va", 4, 6, 3},
		"minimax_h3_fl2v_turbo_8step_v1.0_comfyui_bf16.safetensors": {"lightx2v FL2VA Turbo 8-step", "fl2va", 8, 12, 3},
		"minimax_h3_ref2v_turbo_8step_v1.0_768p.safetensors":        {"lightx2v Ref2VA Turbo 8-step 768p", "ref2va", 8, 6, 3},
		"/loras/minimax_h3_ref2v_turbo_4step_v0.1.safetensors":      {"lightx2v Ref2VA Turbo 4-step", "ref2va", 4, 12, 3},
		"/loras/Minimax_H3_FL2V_Turbo_4step_v0.1.safetensors":       {"lightx2v FL2VA Turbo 4-step", "fl2va", 4, 12, 3},
	} {
		if got, ok := TurboFor(name); !ok || got != want {
			t.Errorf("%s: %+v (%v), want %+v", name, got, ok, want)
		}
	}
	if _, ok := TurboFor("style_lora.safetensors"); ok {
		t.Error("a style LoRA was taken for a Turbo one")
	}
}

// The Turbo preset renders in the steps and shifts of its LoRA; --steps
// wins over it; without a Turbo LoRA it is refused with one sentence.
func TestTurboPresetRenders(t *testing.T) {
	rd := newRenderer(t)
	src := tinyLoRA(t, "x.safetensors", 0)
	path := filepath.Join(t.TempDir(), "minimax_h3_fl2v_turbo_4step_v1.1_768p.safetensors")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	r := tinyRequest(t, "turbo.mp4")
	r.Steps, r.Preset, r.LoRAs = 0, TurboPreset, []LoRA{{Path: path, Strength: 1}}
	job, _ := render(t, rd, r)
	if pr := job.Plan.Request; pr.Steps != 4 || pr.VideoShift != 6 || pr.AudioShift != 3 || job.Stats.Forwards != 4 {
		t.Errorf("turbo preset ran %d steps (%d forwards) at shifts %g/%g, want 4 at 6/3", pr.Steps, job.Stats.Forwards, pr.VideoShift, pr.AudioShift)
	}
	r.Steps = 3
	if got, err := ReleaseDefaults.ApplyPreset(r); err != nil || got.Steps != 3 || got.VideoShift != 6 {
		t.Errorf("--steps 3 with the turbo preset: %+v, %v", got, err)
	}
	r.LoRAs = nil
	_, err = rd.Prepare(context.Background(), r)
	if err == nil || !strings.Contains(TerminalAdvice(err), "Turbo LoRA") {
		t.Errorf("the turbo preset without a Turbo LoRA: %v", err)
	}
}

// The window's check of an adapter: its coverage line on the tiny model;
// a Ref2VA adapter is checked against the Ref2VA DiT rather than refused
// for not being FL2VA's; a misfit is the CLI's sentence.
func TestLoRACoverageForWindow(t *testing.T) {
	rd := newRenderer(t)
	want := fmt.Sprintf("%d modules · rank 2", len(lora.TargetOf(arch.TinyDiT(), "interleaved", "").Modules))
	for _, name := range []string{"style.safetensors", "minimax_h3_ref2v_turbo_4step_v0.1.safetensors"} {
		if got, err := rd.LoRACoverage("", tinyLoRA(t, name, 0)); err != nil || got != want {
			t.Errorf("%s: %q (%v), want %q", name, got, err, want)
		}
	}
	bad := tinyLoRA(t, "wide.safetensors", 3)
	_, err := rd.LoRACoverage("", bad)
	var misfit *lora.Misfit
	if !errors.As(err, &misfit) || misfit.Kind != lora.Shape || !strings.HasPrefix(Advice(err), "The LoRA wide.safetensors does not fit this model") {
		t.Errorf("a misfit gives %v: %q", err, Advice(err))
	}
}
