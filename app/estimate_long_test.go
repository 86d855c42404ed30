//go:build long

package app

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The done-when: a request with 5 pictures, a 3 s clip and a wav
// finishes within ±50 % of the plan's estimate on its first render (priced
// by the calibration) and within ±25 % on its second (refined by the
// first's history entry). The request is the built-in demo model's, at
// its own canvas and length, as a first render naming no model is; the
// calibration measures the same model. References use ComfyUI's sizing
// (match, source) so the test runs in minutes on a 2-core CPU.
func TestLongEstimateWithinTolerance(t *testing.T) {
	rd := newRenderer(t)
	rd.CacheDir, rd.HistoryDir = t.TempDir(), t.TempDir()
	hist, err := OpenHistory(rd.HistoryDir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t0 := time.Now()
	if err := rd.CalibrateOnce(ctx, "auto"); err != nil {
		t.Fatal(err)
	}
	t.Logf("calibration took %s", time.Since(t0).Round(time.Millisecond))
	r := longEstimateRequest(t)
	for i, tol := range []float64{0.5, 0.25} {
		job, err := rd.Prepare(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		est := job.Plan.Time.Seconds
		t1 := time.Now()
		if _, err := job.Run(ctx, nil); err != nil {
			t.Fatal(err)
		}
		took := time.Since(t1).Seconds()
		off := took/est - 1
		fmt.Printf("render %d: estimated %.1f s (%s), took %.1f s (%+.0f %%)\n", i+1, est, EstimateText(job.Plan.Time), took, 100*off)
		for _, ph := range job.Stats.Phases {
			fmt.Printf("  %-10s planned %6.2f s, took %6.2f s\n", ph.Phase, job.Plan.Time.Phase(string(ph.Phase)).Seconds, ph.Elapsed.Seconds())
		}
		if math.Abs(off) > tol {
			t.Errorf("render %d took %.1f s against %.1f s estimated: %+.0f %%, want within ±%.0f %%", i+1, took, est, 100*off, 100*tol)
		}
		recordFinished(t, hist, fmt.Sprint("job", i), r, job)
	}
}

func longEstimateRequest(t *testing.T) Request {
	fx := fixtures(t)
	dir := t.TempDir()
	r := tinyRequest(t, "estimate.mp4")
	r.Model, r.Width, r.Height, r.Frames, r.Steps = DemoModel, 0, 0, 0, 0
	for i := range 5 {
		p := filepath.Join(dir, fmt.Sprintf("p%d.png", i+1))
		ffmpeg(t, "-f", "lavfi", "-i", fmt.Sprintf("testsrc=size=640x480:rate=%d", i+1), "-frames:v", "1", p)
		r.References = append(r.References, Reference{Kind: RefImage, Path: p})
	}
	clip := filepath.Join(dir, "clip.mp4")
	ffmpeg(t, "-f", "lavfi", "-i", "testsrc=size=320x240:rate=24", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
		"-t", "3", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", clip)
	r.References = append(r.References, Reference{Kind: RefVideoAudio, Path: clip}, Reference{Kind: RefAudio, Path: fx.audio})
	return r
}

func ffmpeg(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("ffmpeg", append([]string{"-v", "error", "-nostdin", "-y"}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg %v: %v: %s", args, err, out)
	}
}

// recordFinished writes a finished job into the history as the queue does.
func recordFinished(t *testing.T, h *History, id string, r Request, job *Job) {
	t.Helper()
	rj, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	pj, err := json.Marshal(job.Plan)
	if err != nil {
		t.Fatal(err)
	}
	e := Entry{ID: id, Status: StatusDone, Created: time.Now(), Request: rj, Plan: pj, Phases: phaseMillis(*job.Stats)}
	if err := h.Put(e); err != nil {
		t.Fatal(err)
	}
}
