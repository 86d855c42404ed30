package app

import (
	"encoding/json"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/engine/vae"
)

// TestBenchVAE runs `bench --vae` on the tiny decoder at 320x256x22 on the
// CPU: the decode runs through the production path with the tile the
// planner's options give (one 7-latent chunk; 320 px split into two
// 256-px tiles by the reference's split_tiles, so 2 decoder calls for 22
// frames), its seeded weights are the decoder's parameters at f32, and the
// planned figure is the plan's own decode-phase scratch for the canvas.
func TestBenchVAE(t *testing.T) {
	code, out, errs := runCmd(t, "bench", "--cpu", "--size", "64", "--tokens", "64", "--vae", "320x256x22", "--vae-config", "tiny", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var r benchResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.Name, "vae decode 320x256x22") || r.Backend != "CPU" || r.DType != "f32" || r.Seconds <= 0 || r.GFLOPS <= 0 ||
		r.GraphSeconds <= 0 || r.GraphSeconds > r.Seconds || r.CallBufferBytes <= 0 {
		t.Fatalf("last line %+v, want the VAE decode on the CPU with f32 weights", r)
	}
	m, err := plan.LookupModel("tiny")
	if err != nil {
		t.Fatal(err)
	}
	// The checkpoint's mask_token (1 x 1 x dim, unused at inference) is
	// counted in the parameters but never placed.
	if want := m.VAEDecoderBytes() - int64(m.Dims.DecDim)*4; r.WeightBytes != want {
		t.Errorf("weights %d B, want the tiny decoder's %d parameters less its mask token at f32 (%d B)", r.WeightBytes, m.Dims.VAEDecParams, want)
	}
	if r.Frames != 22 || r.DecodeCalls != 2 {
		t.Errorf("%d frames in %d decoder calls, want 22 in 2", r.Frames, r.DecodeCalls)
	}
	mc, err := LookupMachine("auto")
	if err != nil {
		t.Fatal(err)
	}
	canvas := layout.Canvas{Width: 320, Height: 256}
	p, err := engine.PlanFor(m, plan.Request{Canvas: canvas, Frames: 22, Prompt: vaeBenchPrompt}, mc, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := vae.DecodeTile(arch.TinyVideoVAE(), engine.VideoDecodeOptions(p, ggml.Precision{})); r.TilePx != want {
		t.Errorf("tile %d px, want the planner's %d", r.TilePx, want)
	}
	var scratch int64
	for _, ph := range p.Memory.Phases {
		if ph.Name == plan.PhaseDecode {
			scratch = ph.ScratchBytes
		}
	}
	// At this canvas the video decoder's call outweighs the audio decode,
	// so the phase's scratch is the video figure the bench reports.
	if r.PlannedWorkBytes != scratch || r.PlannedWorkBytes != m.Dims.VideoDecodeBytes(canvas) {
		t.Errorf("planned %d B, want the decode phase's %d B", r.PlannedWorkBytes, scratch)
	}
	// The planner's figure is what ggml reserves for one call, within the
	// ±10 % the planner is held to (arch.DecoderCallBytes).
	if ratio := float64(r.PlannedWorkBytes) / float64(r.CallBufferBytes); ratio < 0.9 || ratio > 1.1 {
		t.Errorf("planned %d B for a decoder call, ggml reserves %d B (%.2fx)", r.PlannedWorkBytes, r.CallBufferBytes, ratio)
	}
	t.Logf("%s: %.3f s, %d calls, planned %d B, call buffers %d B", r.Name, r.Seconds, r.DecodeCalls, r.PlannedWorkBytes, r.CallBufferBytes)
	for _, bad := range [][]string{
		{"--vae", "320x256"}, {"--vae", "320x256x22", "--vae-weights", "bf16"}, {"--vae", "320x256x22", "--vae-config", "big"},
		{"--vae", "300x256x22", "--vae-config", "tiny", "--cpu"},
	} {
		if code, _, errs := runCmd(t, append([]string{"bench", "--size", "64", "--tokens", "64"}, bad...)...); code != 2 || !strings.Contains(errs, "--vae") {
			t.Errorf("bench %v: exit %d, %q; want a usage error naming --vae", bad, code, errs)
		}
	}
}
