package lora

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// alphaRule is the alpha of pairs that carry no .alpha tensor, in the
// precedence the evidence gives (per-pair .alpha, then PEFT's
// adapter_config.json, then the header, then a known file, then the rank).
type alphaRule struct {
	alpha    float64            // 0: alpha = rank
	byModule map[string]float64 // PEFT's alpha_pattern: module suffix -> alpha
	rsLoRA   bool               // PEFT's use_rslora: scale = alpha/√rank
	source   string
}

// ratio is the scale alpha/rank (alpha/√rank under rsLoRA) of a pair
// under key with rank r.
func (a alphaRule) ratio(key string, r int) float64 {
	alpha := a.alpha
	for pat, v := range a.byModule {
		if key == pat || strings.HasSuffix(key, "."+pat) {
			alpha = v
		}
	}
	switch {
	case alpha <= 0:
		return 1 // alpha = rank: PEFT saved without one, ComfyUI's rule
	case a.rsLoRA:
		return alpha / math.Sqrt(float64(r))
	}
	return alpha / float64(r)
}

// metadataAlphas are the header keys trainers store one alpha for the
// whole file under (lightx2v's diffusers files: "alpha"), read only when
// the file has no .alpha tensors, as diffusers and SGLang do.
var metadataAlphas = []string{"alpha", "lora_alpha", "network_alpha"}

// lightx2vV01Alpha is the alpha lightx2v's v0.1 Turbo files were made
// with: they carry none, and their reference script's default is 8
// (ModelTC/Minimax-H3-Turbo inference_minimax_h3.py DEFAULT_LORA_ALPHA);
// alpha = rank would apply them 16x too strong.
const lightx2vV01Alpha = 8

// peftFile and peftConfig are the names PEFT's save_pretrained writes; the
// config is read only beside a file of that name, so one folder's config
// never rescales another adapter.
const (
	peftFile   = "adapter_model.safetensors"
	peftConfig = "adapter_config.json"
)

// alphaOf decides the alpha of pairs without an .alpha tensor.
func alphaOf(f *File) (alphaRule, error) {
	for _, p := range f.pairs {
		if p.alpha != nil {
			return alphaRule{source: "the pairs' .alpha tensors (alpha = rank where one is missing)"}, nil
		}
	}
	if r, ok, err := peftAlpha(f.Path); ok || err != nil {
		return r, err
	}
	for _, k := range metadataAlphas {
		if v, err := strconv.ParseFloat(f.Metadata[k], 64); err == nil && v > 0 && !math.IsInf(v, 0) {
			return alphaRule{alpha: v, source: fmt.Sprintf("the file's metadata (%s = %g)", k, v)}, nil
		}
	}
	n := strings.ToLower(filepath.Base(f.Path))
	if f.Layout == Diffusers && strings.Contains(n, "turbo") && strings.Contains(n, "v0.1") {
		return alphaRule{alpha: lightx2vV01Alpha, source: "lightx2v v0.1's alpha 8 (the file carries none; its reference script's default)"}, nil
	}
	return alphaRule{source: "none in the file: alpha = rank (scale 1)"}, nil
}

// peftAlpha reads lora_alpha, alpha_pattern and use_rslora from the
// adapter_config.json beside a PEFT adapter_model.safetensors.
func peftAlpha(path string) (alphaRule, bool, error) {
	if filepath.Base(path) != peftFile {
		return alphaRule{}, false, nil
	}
	cfgPath := filepath.Join(filepath.Dir(path), peftConfig)
	raw, err := os.ReadFile(cfgPath)
	if errors.Is(err, fs.ErrNotExist) {
		return alphaRule{}, false, nil
	}
	var c struct {
		Alpha   float64            `json:"lora_alpha"`
		Pattern map[string]float64 `json:"alpha_pattern"`
		RS      bool               `json:"use_rslora"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &c)
	}
	if err == nil && (c.Alpha < 0 || math.IsInf(c.Alpha, 0)) {
		err = fmt.Errorf("lora_alpha %g", c.Alpha)
	}
	if err != nil {
		return alphaRule{}, true, &Misfit{Path: path, Kind: NotLoRA, Detail: fmt.Sprintf("its %s cannot be read (%v)", peftConfig, err)}
	}
	return alphaRule{alpha: c.Alpha, byModule: c.Pattern, rsLoRA: c.RS, source: "PEFT's " + peftConfig}, true, nil
}
