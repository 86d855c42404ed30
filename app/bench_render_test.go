package app

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/plan"
	"h3studio/engine/textenc"
	"h3studio/engine/tokenizer"
	"h3studio/engine/weights"
)

// TestBenchRender runs `bench --render` on the tiny configs' synthetic
// snapshot on the CPU: one T2VA render through Prepare and Job.Run, whose
// every phase must be reported with its time, the process's high-water
// mark and the plan's peak for the same request (the plan a Renderer
// makes of it on such a snapshot), with the engine's stages beside them,
// and whose temporary snapshot and clip must be gone afterwards.
func TestBenchRender(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	code, out, errs := runCmd(t, "bench", "--cpu", "--size", "64", "--tokens", "64",
		"--render", "256x256x22", "--render-steps", "2", "--render-config", "tiny", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var r benchResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Name, "render 256x256x22, 2 steps, tiny") || r.Backend != "CPU" || r.Steps != 2 ||
		r.Frames != 22 || r.Rows <= 0 || r.Seconds <= 0 || r.HostPeakBytes <= 0 || r.PlannedPeakBytes <= 0 {
		t.Fatalf("last line %+v, want the render's totals", r)
	}
	p := tinySyntheticPlan(t, Request{Prompt: vaeBenchPrompt, Width: 256, Height: 256, Frames: 22, Steps: 2,
		Seed: renderBenchSeed, Output: filepath.Join(tmp, "x.mp4")})
	planned := map[string]int64{}
	for _, ph := range p.Memory.Phases {
		planned[ph.Name] = ph.PeakBytes
	}
	// The planner's memory phase each engine phase is compared with.
	planPhaseOf := map[string]string{"encode": plan.PhaseText, "denoise": plan.PhaseDenoise,
		"decode": plan.PhaseDecode, "mux": plan.PhaseMux}
	var names []string
	for _, ph := range r.Phases {
		names = append(names, ph.Name)
		if ph.HostPeakBytes <= 0 || ph.DevicePeakBytes != 0 {
			t.Errorf("phase %s: host peak %d B, device %d B; want the process's sampled, no device on the CPU", ph.Name, ph.HostPeakBytes, ph.DevicePeakBytes)
		}
		if ph.Name == string(engine.PhaseReferences) {
			continue // T2VA has no references: the phase is empty and the plan has none
		}
		if want := planned[planPhaseOf[ph.Name]]; ph.Seconds <= 0 || ph.PlannedPeakBytes <= 0 || ph.PlannedPeakBytes != want {
			t.Errorf("phase %s: %.3f s, planned %d B; want its time and the plan's %d B", ph.Name, ph.Seconds, ph.PlannedPeakBytes, want)
		}
	}
	if want := []string{"references", "encode", "denoise", "decode", "mux"}; !slices.Equal(names, want) {
		t.Errorf("phases %v, want %v", names, want)
	}
	var parts []string
	for _, pt := range r.Parts {
		parts = append(parts, pt.Name)
	}
	for _, want := range []string{"text-encoder", "audio-vae-decode", "video-vae-decode"} {
		if !slices.Contains(parts, want) {
			t.Errorf("parts %v lack %s", parts, want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "h3studio-bench-render-*")); len(left) > 0 {
		t.Errorf("the render left %v behind", left)
	}
	t.Logf("%s: %.3f s, phases %+v", r.Name, r.Seconds, r.Phases)
	for _, bad := range [][]string{
		{"--render", "256x256"}, {"--render", "256x256x22", "--render-config", "big"},
		{"--render", "256x256x22", "--render-steps", "0"},
	} {
		if code, _, errs := runCmd(t, append([]string{"bench", "--cpu", "--size", "64", "--tokens", "64"}, bad...)...); code != 2 || !strings.Contains(errs, "--render") {
			t.Errorf("bench %v: exit %d, %q; want a usage error naming --render", bad, code, errs)
		}
	}
}

// tinySyntheticPlan is the Renderer's plan of req on a fresh synthetic
// tiny snapshot, as the bench prepares it.
func tinySyntheticPlan(t *testing.T, req Request) *plan.Plan {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "model")
	if err := weights.WriteSynthetic(dir, weights.SyntheticOptions{Config: weights.SyntheticTiny, Seed: renderBenchSeed}); err != nil {
		t.Fatal(err)
	}
	rd := &Renderer{CacheDir: t.TempDir(), DefaultModel: dir, Device: ggml.DeviceCPU}
	defer rd.Close()
	p, err := rd.Plan(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSyntheticReleaseProfile opens the release's synthetic snapshot: the
// planner's profile of it must be the release's bf16 checkpoint's, so the
// peaks `bench --render` predicts on the GPU are the ones a real release
// render is planned with.
func TestSyntheticReleaseProfile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "model")
	if err := weights.WriteSynthetic(dir, weights.SyntheticOptions{Config: weights.SyntheticRelease, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	e, err := engine.Open(dir, engine.Options{Device: ggml.DeviceCPU, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	want, err := plan.LookupModel("official-bf16")
	if err != nil {
		t.Fatal(err)
	}
	got := e.Profile()
	// The DiT's F32 islands (patch projections, time embedder, output
	// heads) put its stored width a little over bf16's, as the release's
	// files measure; official-bf16 rounds it to 2.
	const ditIslands = 0.002
	type bpp struct{ Qwen, Vision, VAE, Audio float64 }
	if g, w := (bpp{got.QwenBPP, got.VisionBPP, got.VAEBPP, got.AudioVAEBPP}),
		(bpp{want.QwenBPP, want.VisionBPP, want.VAEBPP, want.AudioVAEBPP}); g != w || got.Dims != want.Dims ||
		got.DiTBPP < want.DiTBPP || got.DiTBPP > want.DiTBPP+ditIslands {
		t.Errorf("synthetic release profile %+v (DiT %.4f), want official-bf16's %+v (DiT %.4f; dims equal: %v)", g, got.DiTBPP, w, want.DiTBPP, got.Dims == want.Dims)
	}
	t.Logf("synthetic release: DiT %.4f B per parameter", got.DiTBPP)
	releasePromptRealises(t, dir)
}

// releasePromptRealises plans the GPU run's request on the release's
// synthetic snapshot with an H200's memory and realises its Qwen
// presentation with the snapshot's tokenizer and text encoder, as
// Generate's encode phase begins: the tokenizer and the config must agree
// on the special ids and every id must be in the release's vocabulary.
func releasePromptRealises(t *testing.T, dir string) {
	const h200GB = 139
	rd := &Renderer{CacheDir: t.TempDir(), DefaultModel: dir, Device: ggml.DeviceCPU, MemoryGB: h200GB}
	defer rd.Close()
	p, err := rd.Plan(context.Background(), Request{Prompt: vaeBenchPrompt, Width: 864, Height: 480, Frames: 56, Steps: 20,
		Seed: renderBenchSeed, Output: filepath.Join(t.TempDir(), "x.mp4")})
	if err != nil {
		t.Fatal(err)
	}
	if p.Verdict != plan.Fits {
		t.Fatalf("864x480x56 on %d GB: %s", h200GB, p.Error)
	}
	s, err := weights.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(s.Tokenizer())
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.Partitions[0].Component(weights.TextEncoder).Open()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg, err := arch.ReadModel(arch.OfficialFiles(s.Partitions[0].Dir))
	if err != nil {
		t.Fatal(err)
	}
	m, err := textenc.New(b, src, *cfg.Qwen, textenc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	in, err := m.Realise(tok, p.Layout.Qwen, vaeBenchPrompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range in.IDs {
		if id < 0 || int(id) >= cfg.Qwen.Text.Vocab {
			t.Fatalf("id %d outside the release vocabulary of %d", id, cfg.Qwen.Text.Vocab)
		}
	}
	t.Logf("864x480x56 on %d GB: %d Qwen tokens, %d DiT rows, residency %+v, planned peak %.1f GB in %s",
		h200GB, len(in.IDs), p.DiTRows.Total, p.Residency, float64(p.Memory.PeakBytes)/1e9, p.Memory.PeakPhase)
}
