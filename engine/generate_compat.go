package engine

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"h3studio/engine/vae"
)

// readAudioConfig reads an audio_vae folder's config.json and metadata.json
// for engine/vae, bridging how engine/weights.WriteTiny spells the tiny
// model's metadata (as of this writing) and what engine/vae reads:
//   - attn_proj and decoder_type are absent; the release's values (true,
//     "bigvgan") are the only architecture either package implements;
//   - the head count is written as attention_heads (8, the release's), but
//     engine/vae pools each head's latent_dim/heads features onto the
//     latent channels, which needs latent_dim/heads to be a multiple of
//     them: at the tiny latent_dim 64 and 32 channels only 1 or 2 heads
//     work, so the largest such count is used and a warning logged.
//
// A release snapshot carries every key and passes through unchanged.
func readAudioConfig(config string, log *slog.Logger) (*vae.AudioConfig, error) {
	if log == nil {
		log = slog.Default()
	}
	cj, err := os.ReadFile(config)
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	mj, err := os.ReadFile(filepath.Join(filepath.Dir(config), "metadata.json"))
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	var meta map[string]map[string]map[string]any
	if json.Unmarshal(mj, &meta) != nil || meta["metadata"]["kwargs"] == nil {
		return vae.ParseAudioConfig(cj, mj) // let engine/vae report it
	}
	kw := meta["metadata"]["kwargs"]
	if _, ok := kw["attn_proj"]; !ok {
		kw["attn_proj"] = true
	}
	if _, ok := kw["decoder_type"]; !ok {
		kw["decoder_type"] = "bigvgan"
	}
	if _, ok := kw["num_attention_heads"]; !ok {
		heads, _ := kw["attention_heads"].(float64)
		dim, _ := kw["latent_dim"].(float64)
		ch, _ := kw["vae_latent_channels"].(float64)
		if h := poolableHeads(int(heads), int(dim), int(ch)); h > 0 {
			if h != int(heads) {
				log.Warn("engine: audio VAE head count does not pool onto its latent channels; using the largest that does",
					"attention_heads", int(heads), "latent_dim", int(dim), "channels", int(ch), "heads", h)
			}
			kw["num_attention_heads"] = h
		}
	}
	patched, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	return vae.ParseAudioConfig(cj, patched)
}

// poolableHeads is the largest head count ≤ want (any, when want is 0)
// that splits dim into per-head widths that are multiples of channels;
// 0 when none does.
func poolableHeads(want, dim, channels int) int {
	if dim <= 0 || channels <= 0 {
		return 0
	}
	if want <= 0 {
		want = dim
	}
	for h := min(want, dim); h >= 1; h-- {
		if dim%h == 0 && (dim/h)%channels == 0 {
			return h
		}
	}
	return 0
}

// releaseVideoSource are video_vae/source/config.json keys of the release
// that engine/weights.WriteTiny does not write (as of this writing) and
// engine/vae requires; they name the only architecture either implements.
var releaseVideoSource = map[string]any{
	"pixel_norm_type": "imagenet",
	"scaling_factor":  1.0,
	"shift_factor":    0.0,
}

var releaseViTDecoder = map[string]any{
	"norm_type":      "rms_norm",
	"qk_norm_type":   "rms_norm",
	"qk_norm_affine": false,
}

// readVideoConfig reads a video_vae folder's two configs for engine/vae
// (given source/config.json, as weights.Component.Config names it),
// filling keys the tiny writer leaves out with the release's values; the
// wrapper's latent_channels, when absent, is the number of latent
// statistics it lists. A release snapshot passes through unchanged.
func readVideoConfig(sourceConfig string) (*vae.VideoConfig, error) {
	sj, err := os.ReadFile(sourceConfig)
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	wj, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(sourceConfig)), "config.json"))
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	var src, wrap map[string]any
	if json.Unmarshal(sj, &src) != nil || json.Unmarshal(wj, &wrap) != nil {
		return vae.ParseVideoConfig(wj, sj) // let engine/vae report it
	}
	fillAbsent(src, releaseVideoSource)
	if vit, ok := src["vit_decoder_kwargs"].(map[string]any); ok {
		fillAbsent(vit, releaseViTDecoder)
	}
	if mean, ok := wrap["latents_mean"].([]any); ok {
		fillAbsent(wrap, map[string]any{"latent_channels": len(mean)})
	}
	if sj, err = json.Marshal(src); err != nil {
		return nil, err
	}
	if wj, err = json.Marshal(wrap); err != nil {
		return nil, err
	}
	return vae.ParseVideoConfig(wj, sj)
}

func fillAbsent(m, defaults map[string]any) {
	for k, v := range defaults {
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
}
