package app

import (
	"context"
	"image/color"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"h3studio/engine"
	"h3studio/engine/preview"
)

// The step preview's map is fitted once per VAE (reported as the preview
// phase) and kept in the cache folder under the VAE's key: a render takes
// the cached map as it is, with no fit (a flat map turns every step's
// preview into its one colour), and a damaged file is fitted again and
// replaced.
func TestPreviewMapCachedPerVAE(t *testing.T) {
	rd := newRenderer(t)
	rd.Preview = true
	ctx := context.Background()
	job, err := rd.Prepare(ctx, tinyRequest(t, "preview.mp4"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := job.Engine.PreviewKey(job.Plan.Partition)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(rd.CacheDir, previewDir, key+".json")
	os.Remove(path)
	t.Cleanup(func() { os.Remove(path) })

	fit := &events{}
	fitted, err := PreviewMap(ctx, job.Engine, job.Plan.Partition, rd.CacheDir, fit.sink)
	if err != nil {
		t.Fatal(err)
	}
	if len(fit.find(engine.EventStart, engine.PhasePreview)) != 1 || len(fit.find(engine.EventEnd, engine.PhasePreview)) != 1 {
		t.Errorf("a fit reported %+v, want the preview phase's start and end", fit.evs)
	}
	if stored, err := readPreviewMap(path); err != nil || !reflect.DeepEqual(stored, fitted) {
		t.Fatalf("cache file holds %v (%v), want the fitted map", stored, err)
	}

	flat := &preview.Map{Channels: fitted.Channels}
	for k, bias := range []float64{0.2, 0.4, 0.6} {
		flat.RGB[k] = make([]float64, fitted.Channels+1)
		flat.RGB[k][fitted.Channels] = bias
	}
	if err := writePreviewMap(path, flat); err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	if _, err := job.Run(ctx, ev.sink); err != nil {
		t.Fatal(err)
	}
	steps := ev.find(engine.EventProgress, engine.PhaseDenoise)
	for _, s := range steps {
		if s.Preview == nil {
			t.Fatalf("step %d has no preview", s.Step)
		}
		if got, want := color.RGBAModel.Convert(s.Preview.At(0, 0)), (color.RGBA{51, 102, 153, 255}); got != want {
			t.Fatalf("step %d preview pixel %v, want the cached map's %v", s.Step, got, want)
		}
	}
	if len(steps) == 0 {
		t.Fatal("no denoise steps")
	}
	if n := len(ev.find(engine.EventStart, engine.PhasePreview)); n != 0 {
		t.Errorf("a render with a cached map fitted again (%d preview phases)", n)
	}

	if err := os.WriteFile(path, []byte(`{"channels": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := PreviewMap(ctx, job.Engine, job.Plan.Partition, rd.CacheDir, func(engine.Event) {})
	if err != nil || !reflect.DeepEqual(again, fitted) {
		t.Fatalf("after a damaged cache file: %v, want the fit again", err)
	}
	if stored, err := readPreviewMap(path); err != nil || !reflect.DeepEqual(stored, fitted) {
		t.Fatalf("the damaged cache file was not replaced: %v", err)
	}
}
