package arch

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// DiT is transformer/config.json of a MiniMax-H3 DiT (the same keys sit
// under "transformer" in the Comfy-Org repack's __metadata__["config"]).
// Every architecture field is required: the same code runs the 33B release
// and the tiny test models, so nothing is defaulted to the release's
// numbers. Field order is the release file's, which the tiny writer keeps.
type DiT struct {
	ClassName      string  `json:"_class_name"`
	Hidden         int     `json:"hidden_size"`
	Layers         int     `json:"num_layers"`
	RefinerLayers  int     `json:"token_refiner_num_layers"`
	Heads          int     `json:"num_attention_heads"`
	HeadDim        int     `json:"attention_head_dim"`
	FFN            int     `json:"ffn_hidden_size"`
	LatentChannels int     `json:"latents_dim"`
	AudioChannels  int     `json:"audio_latents_dim"`
	Patch          []int   `json:"patch_size"`
	TextDim        int     `json:"text_dim"`
	TimestepDim    int     `json:"timestep_input_dim"`
	TimeHidden     int     `json:"time_embed_hidden_size"`
	TimeDim        int     `json:"time_embed_dim"`
	RopeFreqs      int     `json:"rope_inv_freq_len"`
	NormEps        float64 `json:"norm_eps"`
	QKNormEps      float64 `json:"qk_norm_eps"`
	FinalNormEps   float64 `json:"final_norm_eps"`
	AdaLNOut       int     `json:"adaln_out_features"`
	FinalAdaLNOut  int     `json:"final_adaln_out_features"`
	// ImageModel is set by the Comfy-Org repack ("minimax_h3").
	ImageModel string `json:"image_model,omitempty"`
	// AdaLNCurveTable marks a pruned curve-form DiT, which is refused.
	AdaLNCurveTable int `json:"adaln_curve_grid,omitempty"`
}

// AdaLN geometry: each block's adaln_proj emits AdaLNSlots vectors (shift,
// scale, gate for attention and for the MLP) for each of Modalities
// (video, text, audio).
const (
	AdaLNSlots = 6
	Modalities = 3
)

// Inner is the attention width, heads·head_dim (7168 in the release, wider than hidden).
func (c *DiT) Inner() int { return c.Heads * c.HeadDim }

// VideoPatchDim is the width of one patchified video row (24·1·2·2 = 96).
func (c *DiT) VideoPatchDim() int { return c.LatentChannels * c.Patch[0] * c.Patch[1] * c.Patch[2] }

// RopeDims is the number of rotated dims per head: 3 axes × rope_inv_freq_len
// pairs, split-half (96 of 128 in the release; the rest are not rotated).
func (c *DiT) RopeDims() int { return 6 * c.RopeFreqs }

// ParseDiT reads transformer/config.json bytes (extra keys are ignored) and
// checks the numbers agree with each other.
func ParseDiT(data []byte) (*DiT, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("dit: config is not a JSON object: %w", err)
	}
	var missing []string
	for _, k := range ditRequiredKeys {
		if _, ok := raw[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("dit: config lacks %s; is this a MiniMax-H3 transformer config?", strings.Join(missing, ", "))
	}
	c := &DiT{}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, fmt.Errorf("dit: config: %w", err)
	}
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// DiTFromMetadata reads the config a single-file repack carries in its
// __metadata__["config"] as {"transformer": {...}}.
func DiTFromMetadata(md map[string]string) (*DiT, error) {
	s, ok := md["config"]
	if !ok {
		return nil, errors.New("dit: file metadata has no \"config\" entry; pass the snapshot's transformer/config.json instead")
	}
	var wrap map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &wrap); err != nil {
		return nil, fmt.Errorf("dit: metadata config is not JSON: %w", err)
	}
	tr, ok := wrap["transformer"]
	if !ok {
		return nil, errors.New("dit: metadata config has no \"transformer\" entry")
	}
	return ParseDiT(tr)
}

var ditRequiredKeys = []string{
	"hidden_size", "num_layers", "token_refiner_num_layers", "num_attention_heads",
	"attention_head_dim", "ffn_hidden_size", "latents_dim", "audio_latents_dim", "patch_size",
	"text_dim", "timestep_input_dim", "time_embed_hidden_size", "time_embed_dim",
	"rope_inv_freq_len", "norm_eps", "qk_norm_eps", "final_norm_eps",
}

// Check reports every internal inconsistency at once.
func (c *DiT) Check() error {
	var errs []string
	bad := func(f string, a ...any) { errs = append(errs, fmt.Sprintf(f, a...)) }
	for name, v := range map[string]int{
		"hidden_size": c.Hidden, "num_layers": c.Layers, "num_attention_heads": c.Heads,
		"attention_head_dim": c.HeadDim, "ffn_hidden_size": c.FFN, "latents_dim": c.LatentChannels,
		"audio_latents_dim": c.AudioChannels, "text_dim": c.TextDim, "timestep_input_dim": c.TimestepDim,
		"time_embed_hidden_size": c.TimeHidden, "time_embed_dim": c.TimeDim, "rope_inv_freq_len": c.RopeFreqs,
	} {
		if v <= 0 {
			bad("%s is %d, want > 0", name, v)
		}
	}
	if c.RefinerLayers < 0 {
		bad("token_refiner_num_layers is %d", c.RefinerLayers)
	}
	if len(c.Patch) != 3 || c.Patch[0] != 1 || c.Patch[1] != 2 || c.Patch[2] != 2 {
		bad("patch_size is %v; only [1, 2, 2] is supported (the row layout depends on it)", c.Patch)
	}
	if c.TimestepDim%2 != 0 {
		bad("timestep_input_dim %d is odd (the sinusoid is [cos | sin])", c.TimestepDim)
	}
	if c.HeadDim%2 != 0 || c.RopeDims() > c.HeadDim {
		bad("rope_inv_freq_len %d rotates %d dims, more than attention_head_dim %d", c.RopeFreqs, c.RopeDims(), c.HeadDim)
	}
	if c.AdaLNOut != 0 && c.Hidden > 0 && c.AdaLNOut != AdaLNSlots*Modalities*c.Hidden {
		bad("adaln_out_features %d != 6·3·hidden_size (%d)", c.AdaLNOut, AdaLNSlots*Modalities*c.Hidden)
	}
	if c.FinalAdaLNOut != 0 && c.Hidden > 0 && c.FinalAdaLNOut != 2*c.Hidden {
		bad("final_adaln_out_features %d != 2·hidden_size (%d)", c.FinalAdaLNOut, 2*c.Hidden)
	}
	for name, e := range map[string]float64{"norm_eps": c.NormEps, "qk_norm_eps": c.QKNormEps, "final_norm_eps": c.FinalNormEps} {
		if !(e > 0 && e < 1) {
			bad("%s is %g, want a small positive number", name, e)
		}
	}
	if c.AdaLNCurveTable != 0 {
		bad("adaln_curve_grid is set: pruned curve-form DiTs are not supported; use the full checkpoint")
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("dit: config: %s", strings.Join(errs, "; "))
	}
	return nil
}

// Shapes lists every tensor of the checkpoint with its shape in checkpoint
// (PyTorch) order: 11 top-level, 8 per refiner block plus its final norm,
// 10 per block, 7 in the final layer (535 in the release).
func (c *DiT) Shapes() map[string][]int64 {
	h, in, ffn := int64(c.Hidden), int64(c.Inner()), int64(c.FFN)
	patch, audio := int64(c.VideoPatchDim()), int64(c.AudioChannels)
	s := map[string][]int64{
		"video_patch_proj.weight":              {h, patch},
		"video_patch_proj.bias":                {h},
		"audio_patch_proj.weight":              {h, audio},
		"audio_patch_proj.bias":                {h},
		"condition_proj.weight":                {h, int64(c.TextDim)},
		"condition_proj.bias":                  {h},
		"time_embedder.proj_in.weight":         {int64(c.TimeHidden), int64(c.TimestepDim)},
		"time_embedder.proj_in.bias":           {int64(c.TimeHidden)},
		"time_embedder.proj_out.weight":        {int64(c.TimeDim), int64(c.TimeHidden)},
		"time_embedder.proj_out.bias":          {int64(c.TimeDim)},
		"rope.inv_freq":                        {int64(c.RopeFreqs)},
		"token_refiner.final_norm.weight":      {h},
		"final_layer.norm.weight":              {h},
		"final_layer.adaln_proj.linear.weight": {2 * h, int64(c.TimeDim)},
		"final_layer.adaln_proj.linear.bias":   {2 * h},
		"final_layer.video_out.weight":         {patch, h},
		"final_layer.video_out.bias":           {patch},
		"final_layer.audio_out.weight":         {audio, h},
		"final_layer.audio_out.bias":           {audio},
	}
	core := func(p string) {
		s[p+"norm1.weight"] = []int64{h}
		s[p+"norm2.weight"] = []int64{h}
		s[p+"attn.qkv_proj.weight"] = []int64{3 * in, h}
		s[p+"attn.out_proj.weight"] = []int64{h, in}
		s[p+"attn.q_norm.weight"] = []int64{int64(c.HeadDim)}
		s[p+"attn.k_norm.weight"] = []int64{int64(c.HeadDim)}
		s[p+"mlp.fc1.weight"] = []int64{2 * ffn, h}
		s[p+"mlp.fc2.weight"] = []int64{h, ffn}
	}
	for i := 0; i < c.RefinerLayers; i++ {
		core(fmt.Sprintf("token_refiner.blocks.%d.", i))
	}
	ada := int64(AdaLNSlots * Modalities * c.Hidden)
	for i := 0; i < c.Layers; i++ {
		p := fmt.Sprintf("blocks.%d.", i)
		core(p)
		s[p+"adaln_proj.linear.weight"] = []int64{ada, int64(c.TimeDim)}
		s[p+"adaln_proj.linear.bias"] = []int64{ada}
	}
	return s
}

// Params is the checkpoint's parameter count (33.12 B in the release).
func (c *DiT) Params() int64 { return countShapes(c.Shapes()) }

func countShapes(m map[string][]int64) int64 {
	var n int64
	for _, s := range m {
		e := int64(1)
		for _, d := range s {
			e *= d
		}
		n += e
	}
	return n
}

// BlockParams splits one DiT block into its per-token linears and norms
// (core, 385.35 M in the release) and its AdaLN projection (260.2 M).
func (c *DiT) BlockParams() (core, adaln int64) {
	for name, s := range c.Shapes() {
		switch {
		case strings.HasPrefix(name, "blocks.0.adaln_proj."):
			adaln += countShapes(map[string][]int64{name: s})
		case strings.HasPrefix(name, "blocks.0."):
			core += countShapes(map[string][]int64{name: s})
		}
	}
	return core, adaln
}

// TrunkParams is everything outside the blocks: refiner, projections,
// time embedder, rope table and final layer.
func (c *DiT) TrunkParams() int64 {
	core, adaln := c.BlockParams()
	return c.Params() - int64(c.Layers)*(core+adaln)
}
