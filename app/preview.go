package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"h3studio/engine"
	"h3studio/engine/preview"
)

// previewDir is the cache folder's subfolder of fitted preview maps, one
// file per video VAE named by engine.PreviewKey.
const previewDir = "preview"

// PreviewMap is the step preview's latent-to-RGB map for the partition's
// video VAE: read from cacheDir when this VAE was fitted before, else
// fitted now with the VAE's decoder (seconds, once per VAE) and stored
// there ("" keeps it nowhere). A fit is reported to sink as the preview
// phase, so the window says what the wait is. The engine must not be
// generating.
func PreviewMap(ctx context.Context, eng *engine.Engine, partition, cacheDir string, sink engine.Sink) (*preview.Map, error) {
	key, err := eng.PreviewKey(partition)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(cacheDir, previewDir, key+".json")
	if cacheDir != "" {
		if m, err := readPreviewMap(path); err == nil {
			return m, nil
		}
	}
	t0 := time.Now()
	sink(engine.Event{Kind: engine.EventStart, Phase: engine.PhasePreview})
	m, err := eng.FitPreview(ctx, partition)
	if err != nil {
		return nil, err
	}
	sink(engine.Event{Kind: engine.EventEnd, Phase: engine.PhasePreview, Elapsed: time.Since(t0)})
	if cacheDir == "" {
		return m, nil
	}
	// A map that could not be stored still serves this render.
	return m, writePreviewMap(path, m)
}

// readPreviewMap reads a cached map; a missing, damaged or foreign file
// is an error, and the caller fits again.
func readPreviewMap(path string) (*preview.Map, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m preview.Map
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("app: preview map %s: %w", path, err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("app: preview map %s: %w", path, err)
	}
	return &m, nil
}

// writePreviewMap stores m at path through a temporary file, so a reader
// never sees half a map.
func writePreviewMap(path string, m *preview.Map) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("app: preview map: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".map-*")
	if err != nil {
		return fmt.Errorf("app: preview map: %w", err)
	}
	_, werr := tmp.Write(b)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("app: preview map: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("app: preview map: %w", err)
	}
	return nil
}

// jobPreviewMap is the map a job's render shows its steps through; when
// there is none (the fit failed), the preview is the false-colour view
// and the render goes on, so a failure is only logged, as is a map that
// could not be stored (the next render fits again).
func (j *Job) jobPreviewMap(ctx context.Context, sink engine.Sink) *preview.Map {
	m, err := PreviewMap(ctx, j.Engine, j.Plan.Partition, j.cacheDir, sink)
	if err != nil {
		log := j.log
		if log == nil {
			log = slog.Default()
		}
		log.Warn("app: step preview map", "err", err, "fitted", m != nil)
	}
	return m
}
