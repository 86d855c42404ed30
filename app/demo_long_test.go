//go:build long

package app

import (
	"context"
	"io/fs"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
	"h3studio/models/demo"
)

// demoRef2VASeconds is issue 15's bound on a Ref2VA render of a phone
// clip and a photo with a model that declares a reference short edge.
const demoRef2VASeconds = 60

// The done-when on the tiny model dressed with the demo model's
// declaration (its canvas, length, steps and reference short edge): an
// 8 s 1080x1920 phone clip with sound plus a 2400x1600 photo, official
// sizing otherwise, renders within a minute on this 2-core machine. It
// took over 14 minutes when references were sized for the release.
func TestLongDemoRef2VAPhoneClip(t *testing.T) {
	needFFmpeg(t)
	decl, err := fs.ReadFile(demo.Snapshot(), weights.DeclarationFile)
	if err != nil {
		t.Fatal(err)
	}
	phoneClipRender(t, declaredTiny(t, string(decl)))
}

// The same render with the built-in demo model itself (its trained
// weights, as a request naming no model gets them).
func TestLongDemoModelRef2VAPhoneClip(t *testing.T) {
	needFFmpeg(t)
	phoneClipRender(t, DemoModel)
}

// phoneClipRender times a Ref2VA render with model of an 8 s 1080x1920
// phone clip with sound and a 2400x1600 photo, from the request to the
// written MP4, and fails over demoRef2VASeconds.
func phoneClipRender(t *testing.T, model string) {
	if !ggml.CPUKernelsVectorised() {
		t.Fatal("ggml's CPU kernels were built without AVX2/FMA, so this timing would not be the app's: run make test-long, or set CGO_CFLAGS and CGO_CXXFLAGS as the Makefile does")
	}
	dir := t.TempDir()
	clip, photo := filepath.Join(dir, "phone.mp4"), filepath.Join(dir, "photo.png")
	phoneClip(t, clip, "8")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=2400x1600",
		"-frames:v", "1", photo).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	rd := &Renderer{CacheDir: t.TempDir()}
	t.Cleanup(rd.Close)
	r := Request{Model: model, Prompt: "Picture 1 moves right while Video 1 plays", Seed: 1,
		Output:     filepath.Join(dir, "out.mp4"),
		References: []Reference{{Kind: RefVideoAudio, Path: clip}, {Kind: RefImage, Path: photo}}}
	t0 := time.Now()
	job, err := rd.Prepare(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := job.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	for i, rp := range job.Plan.References {
		t.Logf("reference %d: %s at %s, %d frames", i+1, rp.Kind, rp.Canvas, rp.Frames)
	}
	for _, ph := range job.Stats.Phases {
		t.Logf("  %-10s %6.2f s", ph.Phase, ph.Elapsed.Seconds())
	}
	t.Logf("Ref2VA render (%s) of an 8 s 1080x1920 clip with sound and a 2400x1600 photo: %.1f s wall (plan estimate %.1f s)",
		model, took.Seconds(), job.Plan.Time.Seconds)
	if took.Seconds() > demoRef2VASeconds {
		t.Errorf("took %.1f s, want at most %d s", took.Seconds(), demoRef2VASeconds)
	}
}
