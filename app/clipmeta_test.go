package app

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"h3studio/engine/plan"
)

// A clip rendered through the real path carries its request: ffprobe (not
// our reader) shows the tag with the request's JSON, and RequestFromClip
// gives back the request as it was asked, less the output paths.
func TestClipCarriesRequest(t *testing.T) {
	rd := newRenderer(t)
	fx := fixtures(t)
	r := tinyRequest(t, "tagged.mp4")
	r.Preset, r.Layers = "fast", 3
	r.FramesDir = filepath.Join(t.TempDir(), "frames")
	r.References = []Reference{{Kind: RefImage, Path: fx.image1}, {Kind: RefVideo, Path: fx.clip}}
	render(t, rd, r)
	checkMP4(t, r.Output, 64, 64, 22)

	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "format_tags", "-of", "json", r.Output).Output()
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Format struct {
			Tags map[string]string `json:"tags"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	tag := rep.Format.Tags[ClipRequestKey]
	var stored map[string]any
	if err := json.Unmarshal([]byte(tag), &stored); err != nil {
		t.Fatalf("ffprobe's %s tag %q is not JSON: %v", ClipRequestKey, tag, err)
	}
	if stored["version"] != float64(1) || stored["prompt"] != r.Prompt || stored["seed"] != float64(7) || stored["preset"] != "fast" ||
		!strings.Contains(tag, fx.clip) || stored["output"] != nil || stored["frames_dir"] != nil {
		t.Errorf("ffprobe shows %s = %s", ClipRequestKey, tag)
	}

	got, ok, err := RequestFromClip(context.Background(), r.Output)
	if err != nil || !ok {
		t.Fatalf("RequestFromClip: ok %v, %v", ok, err)
	}
	want := r
	want.Output, want.FramesDir = "", ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RequestFromClip gave\n%+v\nwant\n%+v", got, want)
	}

	// Any other clip has no request; a damaged or newer tag is an error.
	if _, ok, err := RequestFromClip(context.Background(), fx.clip); ok || err != nil {
		t.Errorf("plain clip: ok %v, %v", ok, err)
	}
	for _, bad := range []string{`{"version":1,"seed":"x"}`, `{"version":9,"prompt":"later"}`} {
		p := filepath.Join(t.TempDir(), "bad.mp4")
		if out, err := exec.Command("ffmpeg", "-v", "error", "-nostdin", "-i", fx.clip, "-c", "copy", "-metadata", ClipRequestKey+"="+bad,
			"-movflags", "+use_metadata_tags", p).CombinedOutput(); err != nil {
			t.Fatalf("ffmpeg: %v: %s", err, out)
		}
		if _, ok, err := RequestFromClip(context.Background(), p); ok || err == nil {
			t.Errorf("tag %s: ok %v, %v; want an error", bad, ok, err)
		}
	}
}

// SetMemoryGB changes the budget the next plans use, safely while other
// goroutines plan (run under -race by make test-race).
func TestSetMemoryGB(t *testing.T) {
	rd := newRenderer(t)
	r := tinyRequest(t, "budget.mp4")
	r.Machine = "m5-max-128"
	job, err := rd.Prepare(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	peak := job.Plan.Memory.PeakBytes
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = rd.Prepare(context.Background(), r)
		}()
	}
	small := float64(peak) / 2 / (1 << 30)
	rd.SetMemoryGB(small)
	wg.Wait()
	_, err = rd.Prepare(context.Background(), r)
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Plan.Verdict == plan.Fits || refused.Plan.Memory.BudgetBytes != int64(small*(1<<30)) {
		t.Fatalf("budget %.4f GB under a peak of %d bytes: %v", small, peak, err)
	}
	t.Logf("peak %d bytes; at %.4f GB: %s", peak, small, refused.Error())
	rd.SetMemoryGB(0)
	if job, err := rd.Prepare(context.Background(), r); err != nil || job.Plan.Memory.BudgetBytes <= peak {
		t.Errorf("budget back to the machine's: %v", err)
	}
}
