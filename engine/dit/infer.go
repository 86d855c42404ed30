package dit

import (
	"fmt"
	"strconv"
	"strings"

	"h3studio/engine/weights"
)

// releaseEps is the norm epsilon of every MiniMax-H3 release config; tensor
// shapes cannot tell it, so InferConfig assumes it.
const releaseEps = 1e-5

// InferConfig derives the config from tensor shapes alone, as
// stable-diffusion.cpp's detect_from_weights does: for GGUF files, which
// carry no config.json. Only the norm epsilons are assumed (1e-5, the
// release's); everything else is read off the shapes and counted blocks.
func InferConfig(src weights.Source) (*Config, error) {
	var errs []string
	dim := func(name string, axis int) int {
		t, ok := src.Lookup(name)
		if !ok || axis >= len(t.Shape) {
			errs = append(errs, name)
			return 0
		}
		return int(t.Shape[axis])
	}
	c := &Config{
		Hidden:        dim("video_patch_proj.weight", 0),
		AudioChannels: dim("audio_patch_proj.weight", 1),
		TextDim:       dim("condition_proj.weight", 1),
		TimestepDim:   dim("time_embedder.proj_in.weight", 1),
		TimeHidden:    dim("time_embedder.proj_in.weight", 0),
		TimeDim:       dim("time_embedder.proj_out.weight", 0),
		RopeFreqs:     dim("rope.inv_freq", 0),
		HeadDim:       dim("blocks.0.attn.q_norm.weight", 0),
		FFN:           dim("blocks.0.mlp.fc2.weight", 1),
		Patch:         []int{1, 2, 2},
		NormEps:       releaseEps, QKNormEps: releaseEps, FinalNormEps: releaseEps,
	}
	c.LatentChannels = dim("video_patch_proj.weight", 1) / 4
	if qkv := dim("blocks.0.attn.qkv_proj.weight", 0); c.HeadDim > 0 {
		c.Heads = qkv / 3 / c.HeadDim
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("dit: cannot infer the config: the checkpoint lacks %s", strings.Join(errs, ", "))
	}
	c.Layers = countBlocks(src, "blocks.")
	c.RefinerLayers = countBlocks(src, "token_refiner.blocks.")
	c.AdaLNOut = adaSlots * Modalities * c.Hidden
	c.FinalAdaLNOut = 2 * c.Hidden
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// countBlocks is one more than the largest N of prefix+"N." names.
func countBlocks(src weights.Source, prefix string) int {
	n := 0
	for _, t := range src.Tensors() {
		rest, ok := strings.CutPrefix(t.Name, prefix)
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ".")
		if i, err := strconv.Atoi(num); err == nil && i+1 > n {
			n = i + 1
		}
	}
	return n
}

// ConfigFor picks a checkpoint's config: the snapshot's config.json bytes
// when there are any, else the file's metadata (Comfy-Org repack), else
// the tensor shapes (GGUF). The result is always cross-checked by Load.
func ConfigFor(src weights.Source, configJSON []byte) (*Config, error) {
	if len(configJSON) > 0 {
		return ParseConfig(configJSON)
	}
	if _, ok := src.Metadata()["config"]; ok {
		return ConfigFromMetadata(src.Metadata())
	}
	return InferConfig(src)
}
