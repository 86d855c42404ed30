package engine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"h3studio/engine/preview"
	"h3studio/engine/sampler"
	"h3studio/engine/vae"
	"h3studio/engine/weights"
)

// The preview fit decodes previewFitDecodes still latents of
// previewFitCells² cells (256 pixels a side: one decoder tile at the
// release's vae_tile_size), each a smooth field on a previewFitGrid²
// grid, two steps long so that they take the decoder's video path as the
// denoised clip does. 4·16² = 1024 cells fit C+1 coefficients per colour
// (25 for the tiny model's 24 channels) many times over.
const (
	previewFitDecodes = 4
	previewFitCells   = 16
	previewFitGrid    = 4
	previewFitSteps   = 2
	previewFitSeed    = 0x9e3779b9
	// previewFitVersion changes whenever the recipe above does, so maps
	// cached under PreviewKey from an older recipe are not reused.
	previewFitVersion = 1
)

// FitPreview fits the step preview's latent-to-RGB map for the named
// partition's video VAE: it loads the VAE decoder (nothing else is
// resident: call it between generations), decodes still latents and
// solves for the map by least squares. The map depends only on the VAE
// (PreviewKey names it), so callers fit once and keep it.
func (e *Engine) FitPreview(ctx context.Context, partition string) (*preview.Map, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.backend == nil {
		return nil, errors.New("engine: closed")
	}
	comp, cfg, err := e.videoVAEOf(partition)
	if err != nil {
		return nil, err
	}
	src, err := comp.Open()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	dec, err := vae.LoadVideoDecoder(e.backend, src, cfg, vae.DecodeOptions{Precision: e.precision(), Logger: e.log})
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	c, n := cfg.LatentChannels, previewFitCells
	f := preview.NewFitter(c)
	for i := range previewFitDecodes {
		noise := sampler.TorchNormal(previewFitSeed+uint64(i), c*previewFitGrid*previewFitGrid)
		lat, err := preview.StaticField(noise, c, previewFitSteps, n, n, previewFitGrid)
		if err != nil {
			return nil, err
		}
		clip, err := dec.DecodeClip(ctx, vae.Latent{C: c, T: previewFitSteps, H: n, W: n, Data: lat})
		if err != nil {
			return nil, fmt.Errorf("engine: preview fit: %w", err)
		}
		if err := f.AddStatic(lat, c, previewFitSteps, n, n, clip.Data, clip.T, cfg.SpatialRatio()); err != nil {
			return nil, err
		}
	}
	m, err := f.Map()
	if err != nil {
		return nil, fmt.Errorf("engine: preview fit of the %s video VAE: %w", partition, err)
	}
	e.log.Info("engine: preview map fitted", "partition", partition, "samples", f.Samples())
	return m, nil
}

// PreviewKey names the map FitPreview makes for the partition: a SHA-256
// over the fit recipe's version, the video VAE's config (its latents_mean
// and latents_std are part of what the decoder does) and every stored
// tensor (name, type, shape, bytes). It reads the whole VAE once per
// Engine and partition.
func (e *Engine) PreviewKey(partition string) (string, error) {
	e.keyMu.Lock()
	defer e.keyMu.Unlock()
	if k, ok := e.previewKeys[partition]; ok {
		return k, nil
	}
	comp, cfg, err := e.videoVAEOf(partition)
	if err != nil {
		return "", err
	}
	src, err := comp.Open()
	if err != nil {
		return "", err
	}
	defer src.Close()
	h := sha256.New()
	cj, err := json.Marshal(cfg)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "h3studio preview map v%d\n%s\n", previewFitVersion, cj)
	for _, t := range src.Tensors() {
		fmt.Fprintf(h, "%s %s %v\n", t.Name, t.DType, t.Shape)
		data, ok := src.Data(t.Name)
		if !ok {
			return "", fmt.Errorf("engine: preview key: tensor %s of %s has no data", t.Name, comp.Path)
		}
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(data))))
		h.Write(data)
	}
	k := hex.EncodeToString(h.Sum(nil))
	if e.previewKeys == nil {
		e.previewKeys = map[string]string{}
	}
	e.previewKeys[partition] = k
	return k, nil
}

// videoVAEOf is the partition's video VAE component and parsed config.
func (e *Engine) videoVAEOf(partition string) (*weights.Component, *vae.VideoConfig, error) {
	part := e.partition(partition)
	if part == nil {
		return nil, nil, fmt.Errorf("engine: the snapshot at %s has no %s partition", e.snap.Root, partition)
	}
	comp := part.Component(weights.VideoVAE)
	if comp == nil {
		return nil, nil, fmt.Errorf("engine: the %s partition has no %s", partition, weights.VideoVAE)
	}
	return comp, e.models[partition].VideoVAE, nil
}
