package textenc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// ReleaseLayers is how many language layers MiniMax-H3 runs: the first 50
// of Qwen3-VL-32B's 64, read out before the final norm.
const ReleaseLayers = 50

// Config is the part of a Qwen3-VL config.json the encoder needs. It is
// parsed from the checkpoint (text_encoder/config.json) and cross-checked
// against the tensor shapes by Model loading.
type Config struct {
	Text   TextConfig
	Vision VisionConfig

	// Special token ids (top level of config.json).
	ImageToken, VideoToken, VisionStart, VisionEnd int
}

// TextConfig describes the language model (text_config).
type TextConfig struct {
	Vocab, Hidden, Intermediate int
	Layers                      int // layers in the checkpoint (H3 runs the first ReleaseLayers)
	Heads, KVHeads, HeadDim     int
	Eps                         float32 // RMSNorm epsilon, every norm
	RoPETheta                   float64
	// MRoPESection splits the head's HeadDim/2 rotary pairs between the t, h
	// and w axes; Qwen3-VL interleaves them (pair i: i%3 picks the axis while
	// within its section, the rest go to t).
	MRoPESection [3]int
	Interleaved  bool
}

// VisionConfig describes the vision tower (vision_config).
type VisionConfig struct {
	Depth, Hidden, Intermediate, Heads int
	InChannels, Patch, TemporalPatch   int
	SpatialMerge                       int
	OutHidden                          int // = TextConfig.Hidden
	NumPositions                       int // learned position grid, a square (48x48 in the release)
	Deepstack                          []int
	RoPETheta                          float64
	Act                                string // MLP activation: gelu_pytorch_tanh in the release
}

type ropeJSON struct {
	RopeType         string   `json:"rope_type"`
	Type             string   `json:"type"`
	RopeTheta        *float64 `json:"rope_theta"`
	MRoPESection     []int    `json:"mrope_section"`
	MRoPEInterleaved *bool    `json:"mrope_interleaved"`
}

type configJSON struct {
	ImageTokenID       *int `json:"image_token_id"`
	VideoTokenID       *int `json:"video_token_id"`
	VisionStartTokenID *int `json:"vision_start_token_id"`
	VisionEndTokenID   *int `json:"vision_end_token_id"`
	TextConfig         struct {
		VocabSize         int       `json:"vocab_size"`
		HiddenSize        int       `json:"hidden_size"`
		IntermediateSize  int       `json:"intermediate_size"`
		NumHiddenLayers   int       `json:"num_hidden_layers"`
		NumAttentionHeads int       `json:"num_attention_heads"`
		NumKeyValueHeads  int       `json:"num_key_value_heads"`
		HeadDim           int       `json:"head_dim"`
		HiddenAct         string    `json:"hidden_act"`
		RMSNormEps        *float64  `json:"rms_norm_eps"`
		AttentionBias     bool      `json:"attention_bias"`
		RopeTheta         *float64  `json:"rope_theta"`
		RopeScaling       *ropeJSON `json:"rope_scaling"`
		RopeParameters    *ropeJSON `json:"rope_parameters"`
	} `json:"text_config"`
	VisionConfig struct {
		Depth                  int       `json:"depth"`
		HiddenSize             int       `json:"hidden_size"`
		HiddenAct              string    `json:"hidden_act"`
		IntermediateSize       int       `json:"intermediate_size"`
		NumHeads               int       `json:"num_heads"`
		InChannels             int       `json:"in_channels"`
		PatchSize              int       `json:"patch_size"`
		SpatialMergeSize       int       `json:"spatial_merge_size"`
		TemporalPatchSize      int       `json:"temporal_patch_size"`
		OutHiddenSize          int       `json:"out_hidden_size"`
		NumPositionEmbeddings  int       `json:"num_position_embeddings"`
		DeepstackVisualIndexes []int     `json:"deepstack_visual_indexes"`
		RopeParameters         *ropeJSON `json:"rope_parameters"`
	} `json:"vision_config"`
}

// LoadConfig reads and validates a Qwen3-VL config.json.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("textenc: read config: %w", err)
	}
	c, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("%w (in %s)", err, path)
	}
	return c, nil
}

func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// ParseConfig parses config.json bytes. Missing special token ids take the
// Qwen3-VL defaults; both the rope_scaling form (the release's) and the
// rope_parameters form (transformers 5) of the RoPE settings are accepted.
func ParseConfig(data []byte) (Config, error) {
	var j configJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return Config{}, fmt.Errorf("textenc: parse config: %w", err)
	}
	t, v := j.TextConfig, j.VisionConfig
	c := Config{
		ImageToken:  intOr(j.ImageTokenID, 151655),
		VideoToken:  intOr(j.VideoTokenID, 151656),
		VisionStart: intOr(j.VisionStartTokenID, 151652),
		VisionEnd:   intOr(j.VisionEndTokenID, 151653),
		Text: TextConfig{
			Vocab: t.VocabSize, Hidden: t.HiddenSize, Intermediate: t.IntermediateSize,
			Layers: t.NumHiddenLayers, Heads: t.NumAttentionHeads, KVHeads: t.NumKeyValueHeads,
			HeadDim: t.HeadDim, Eps: 1e-6, RoPETheta: 5e6,
			MRoPESection: [3]int{24, 20, 20}, Interleaved: true,
		},
		Vision: VisionConfig{
			Depth: v.Depth, Hidden: v.HiddenSize, Intermediate: v.IntermediateSize, Heads: v.NumHeads,
			InChannels: v.InChannels, Patch: v.PatchSize, TemporalPatch: v.TemporalPatchSize,
			SpatialMerge: v.SpatialMergeSize, OutHidden: v.OutHiddenSize,
			NumPositions: v.NumPositionEmbeddings, Deepstack: v.DeepstackVisualIndexes,
			RoPETheta: 10000, Act: v.HiddenAct,
		},
	}
	if c.Text.HeadDim == 0 && t.NumAttentionHeads > 0 {
		c.Text.HeadDim = t.HiddenSize / t.NumAttentionHeads
	}
	if c.Text.KVHeads == 0 {
		c.Text.KVHeads = c.Text.Heads
	}
	if t.RMSNormEps != nil {
		c.Text.Eps = float32(*t.RMSNormEps)
	}
	if t.RopeTheta != nil {
		c.Text.RoPETheta = *t.RopeTheta
	}
	for _, r := range []*ropeJSON{t.RopeScaling, t.RopeParameters} {
		if r == nil {
			continue
		}
		if r.RopeTheta != nil {
			c.Text.RoPETheta = *r.RopeTheta
		}
		if len(r.MRoPESection) == 3 {
			copy(c.Text.MRoPESection[:], r.MRoPESection)
		}
		if r.MRoPEInterleaved != nil {
			c.Text.Interleaved = *r.MRoPEInterleaved
		}
	}
	if v.RopeParameters != nil && v.RopeParameters.RopeTheta != nil {
		c.Vision.RoPETheta = *v.RopeParameters.RopeTheta
	}
	if c.Vision.InChannels == 0 {
		c.Vision.InChannels = 3
	}
	if t.AttentionBias {
		return c, errors.New("textenc: config: attention_bias is true; Qwen3-VL has no attention biases")
	}
	if t.HiddenAct != "" && t.HiddenAct != "silu" {
		return c, fmt.Errorf("textenc: config: text hidden_act %q, want silu", t.HiddenAct)
	}
	return c, c.Validate()
}

// Validate reports every inconsistency at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf("textenc: config: "+format, a...)) }
	t, v := c.Text, c.Vision
	if t.Hidden <= 0 || t.Intermediate <= 0 || t.Layers <= 0 || t.Heads <= 0 || t.KVHeads <= 0 || t.HeadDim <= 0 || t.Vocab <= 0 {
		bad("text sizes must be positive (hidden %d, intermediate %d, layers %d, heads %d/%d, head_dim %d, vocab %d)",
			t.Hidden, t.Intermediate, t.Layers, t.Heads, t.KVHeads, t.HeadDim, t.Vocab)
	} else if t.Heads%t.KVHeads != 0 {
		bad("%d attention heads are not a multiple of %d KV heads", t.Heads, t.KVHeads)
	}
	if t.HeadDim%2 != 0 {
		bad("head_dim %d is odd", t.HeadDim)
	}
	if s := t.MRoPESection; s[0]+s[1]+s[2] != t.HeadDim/2 || s[0] < 0 || s[1] < 0 || s[2] < 0 {
		bad("mrope_section %v does not split the %d rotary pairs of head_dim %d", s, t.HeadDim/2, t.HeadDim)
	}
	if !t.Interleaved {
		bad("mrope_interleaved is false; only Qwen3-VL's interleaved mRoPE is implemented")
	}
	if v.Depth <= 0 || v.Hidden <= 0 || v.Heads <= 0 || v.Intermediate <= 0 || v.Patch <= 0 || v.TemporalPatch <= 0 || v.SpatialMerge <= 0 {
		bad("vision sizes must be positive (depth %d, hidden %d, heads %d, intermediate %d, patch %d, temporal %d, merge %d)",
			v.Depth, v.Hidden, v.Heads, v.Intermediate, v.Patch, v.TemporalPatch, v.SpatialMerge)
	} else if v.Hidden%v.Heads != 0 || (v.Hidden/v.Heads)%4 != 0 {
		bad("vision hidden %d over %d heads must give a head dim divisible by 4 (2-D rotary halves)", v.Hidden, v.Heads)
	}
	if v.OutHidden != t.Hidden {
		bad("vision out_hidden_size %d differs from the text hidden size %d", v.OutHidden, t.Hidden)
	}
	if side := gridSide(v.NumPositions); side*side != v.NumPositions || side < 2 {
		bad("num_position_embeddings %d is not a square of side >= 2", v.NumPositions)
	}
	for i, d := range v.Deepstack {
		if d < 0 || d >= v.Depth || (i > 0 && d <= v.Deepstack[i-1]) {
			bad("deepstack_visual_indexes %v must increase within the %d vision layers", v.Deepstack, v.Depth)
			break
		}
	}
	switch v.Act {
	case "gelu_pytorch_tanh", "gelu", "":
	default:
		bad("vision hidden_act %q is not supported", v.Act)
	}
	return errors.Join(errs...)
}

func gridSide(n int) int {
	s := 0
	for (s+1)*(s+1) <= n {
		s++
	}
	return s
}
