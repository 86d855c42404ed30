package engine_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/models/demo"
)

// demoStepTolerance bounds the demo model's step and final latents at the
// issue's own figure (relative L2 1e-3 in f32), where the random tiny
// model's are held to 1e-4: a trained DiT amplifies the float-order
// differences between the engine and torch from step to step (the T2VA
// case's audio latents: 7e-7, 8e-6 and 1.4e-4 over its three steps when
// ggml is built for AVX2 and FMA as make builds it, 8e-5 at the end
// without), while the Qwen states and condition rows stay within 1e-4.
const demoStepTolerance = 1e-3

// TestEndToEndParityDemo: the built-in demo model's trained weights through
// the whole pipeline against the reference on the same weights, the same
// requests and the same noise (tools/fixtures/e2e/demo_gen.py; its
// fixtures carry the weights' digest, so a retrained snapshot without
// regenerated fixtures fails here rather than passing on old numbers).
func TestEndToEndParityDemo(t *testing.T) {
	dir, err := demo.Dir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"t2va", "fl2va_first_last", "ref2va_mixed"} {
		t.Run(name, func(t *testing.T) {
			fx := openFixtureFile(t, filepath.Join(parityDir, "testdata", "demo", name+".safetensors"))
			if got, want := demoWeightsDigest(t, dir), fx.weights(t); got != want {
				t.Fatalf("the demo model's weights (%s) are not the ones the fixtures were made from (%s): run tools/fixtures/e2e/demo_gen.py", got, want)
			}
			e, err := engine.Open(dir, engine.Options{CacheEntries: -1, Exact: true, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(e.Close)
			runParityCaseOn(t, fx, e, demoStepTolerance)
		})
	}
}

// demoWeightsDigest is demo_gen.py's snapshot_digest: SHA-256 over the
// DiT's, the video VAE's, the audio VAE's and the text encoder's
// safetensors files, in that order and by name within each folder, first
// 16 hex digits (the text encoder may train too: train_dit.py --text-lr).
func demoWeightsDigest(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	for _, comp := range []string{"transformer", filepath.Join("video_vae", "source"), "audio_vae", "text_encoder"} {
		d := filepath.Join(dir, "FL2VA", comp)
		names, err := filepath.Glob(filepath.Join(d, "*.safetensors"))
		if err != nil {
			t.Fatal(err)
		}
		sort.Strings(names)
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// weights is the digest demo_gen.py recorded in the fixture's case.
func (fx *fixture) weights(t *testing.T) string {
	t.Helper()
	var m struct {
		Weights string `json:"weights"`
	}
	if err := json.Unmarshal([]byte(fx.f.Metadata["case"]), &m); err != nil || m.Weights == "" {
		t.Fatalf("the fixture records no weights digest (%v)", err)
	}
	return strings.TrimSpace(m.Weights)
}
