package arch

import (
	"encoding/json"
	"errors"
	"fmt"
)

// QwenLayersUsed is how many language layers MiniMax-H3 runs: the first 50
// of Qwen3-VL-32B's 64, read out before the final norm.
const QwenLayersUsed = 50

// Qwen is text_encoder/config.json (Hugging Face Qwen3VLForConditionalGeneration).
// ParseQwen fills what the file leaves out with Qwen3-VL's defaults, so
// after parsing every field the encoder reads is set. Field order is the
// release file's, which the tiny writer keeps.
type Qwen struct {
	Architectures []string `json:"architectures,omitempty"`
	ModelType     string   `json:"model_type,omitempty"`
	// Special token ids.
	ImageToken        int        `json:"image_token_id"`
	VideoToken        int        `json:"video_token_id"`
	VisionStart       int        `json:"vision_start_token_id"`
	VisionEnd         int        `json:"vision_end_token_id"`
	TieWordEmbeddings bool       `json:"tie_word_embeddings"`
	Text              QwenText   `json:"text_config"`
	Vision            QwenVision `json:"vision_config"`
}

// QwenText describes the language model (text_config).
type QwenText struct {
	ModelType    string `json:"model_type,omitempty"`
	Vocab        int    `json:"vocab_size"`
	Hidden       int    `json:"hidden_size"`
	Intermediate int    `json:"intermediate_size"`
	// Layers is the checkpoint's count (H3 runs the first QwenLayersUsed).
	Layers       int     `json:"num_hidden_layers"`
	Heads        int     `json:"num_attention_heads"`
	KVHeads      int     `json:"num_key_value_heads"`
	HeadDim      int     `json:"head_dim"`
	Act          string  `json:"hidden_act"`
	MaxPositions int     `json:"max_position_embeddings,omitempty"`
	Eps          float64 `json:"rms_norm_eps"` // every norm
	RoPETheta    float64 `json:"rope_theta"`
	// RoPE is the mRoPE layout in the release's rope_scaling spelling;
	// ParseQwen folds transformers 5's rope_parameters into it.
	RoPE              QwenRoPE `json:"rope_scaling"`
	AttentionBias     bool     `json:"attention_bias"`
	AttentionDropout  float64  `json:"attention_dropout"`
	BOSToken          int      `json:"bos_token_id,omitempty"`
	EOSToken          int      `json:"eos_token_id,omitempty"`
	DType             string   `json:"dtype,omitempty"`
	TieWordEmbeddings bool     `json:"tie_word_embeddings"`
	UseCache          bool     `json:"use_cache"`
	InitializerRange  float64  `json:"initializer_range,omitempty"`
}

// QwenRoPE is the text model's mRoPE description. Section splits the head's
// HeadDim/2 rotary pairs between the t, h and w axes; Qwen3-VL interleaves
// them (pair i: i%3 picks the axis while within its section, the rest go
// to t).
type QwenRoPE struct {
	Type        string  `json:"rope_type"`
	Theta       float64 `json:"rope_theta,omitempty"`
	Section     [3]int  `json:"mrope_section"`
	Interleaved bool    `json:"mrope_interleaved"`
}

// QwenVision describes the vision tower (vision_config).
type QwenVision struct {
	ModelType     string `json:"model_type,omitempty"`
	Depth         int    `json:"depth"`
	Hidden        int    `json:"hidden_size"`
	Act           string `json:"hidden_act"` // gelu_pytorch_tanh in the release
	Intermediate  int    `json:"intermediate_size"`
	Heads         int    `json:"num_heads"`
	InChannels    int    `json:"in_channels"`
	Patch         int    `json:"patch_size"`
	SpatialMerge  int    `json:"spatial_merge_size"`
	TemporalPatch int    `json:"temporal_patch_size"`
	OutHidden     int    `json:"out_hidden_size"` // = QwenText.Hidden
	// NumPositions is the learned position grid, a square (48x48 in the release).
	NumPositions     int     `json:"num_position_embeddings"`
	Deepstack        []int   `json:"deepstack_visual_indexes"`
	InitializerRange float64 `json:"initializer_range,omitempty"`
	// RoPETheta is the 2-D rotary base: 10000 unless rope_parameters says.
	RoPETheta float64 `json:"-"`
}

// qwenDefaults are Qwen3-VL's values for keys a config may leave out.
func qwenDefaults() Qwen {
	return Qwen{
		ImageToken: 151655, VideoToken: 151656, VisionStart: 151652, VisionEnd: 151653,
		Text: QwenText{Eps: 1e-6, RoPETheta: 5e6,
			RoPE: QwenRoPE{Type: "default", Section: [3]int{24, 20, 20}, Interleaved: true}},
		Vision: QwenVision{InChannels: 3, RoPETheta: 10000},
	}
}

// ParseQwen parses config.json bytes (extra keys are ignored). Missing
// special token ids and norm/RoPE settings take the Qwen3-VL defaults; both
// the rope_scaling form (the release's) and the rope_parameters form
// (transformers 5) of the RoPE settings are accepted.
func ParseQwen(data []byte) (Qwen, error) {
	c := qwenDefaults()
	if err := json.Unmarshal(data, &c); err != nil {
		return Qwen{}, fmt.Errorf("textenc: parse config: %w", err)
	}
	// The transformers 5 blocks decode over what is already there, so a
	// key they lack keeps its rope_scaling or default value.
	var v5 struct {
		Text struct {
			RoPE *json.RawMessage `json:"rope_parameters"`
		} `json:"text_config"`
		Vision struct {
			RoPE *struct {
				Theta float64 `json:"rope_theta"`
			} `json:"rope_parameters"`
		} `json:"vision_config"`
	}
	if err := json.Unmarshal(data, &v5); err != nil {
		return Qwen{}, fmt.Errorf("textenc: parse config: %w", err)
	}
	if v5.Text.RoPE != nil {
		if err := json.Unmarshal(*v5.Text.RoPE, &c.Text.RoPE); err != nil {
			return Qwen{}, fmt.Errorf("textenc: parse config: rope_parameters: %w", err)
		}
	}
	if c.Text.RoPE.Theta != 0 {
		c.Text.RoPETheta = c.Text.RoPE.Theta
	}
	if r := v5.Vision.RoPE; r != nil && r.Theta != 0 {
		c.Vision.RoPETheta = r.Theta
	}
	if c.Text.HeadDim == 0 && c.Text.Heads > 0 {
		c.Text.HeadDim = c.Text.Hidden / c.Text.Heads
	}
	if c.Text.KVHeads == 0 {
		c.Text.KVHeads = c.Text.Heads
	}
	if c.Text.AttentionBias {
		return c, errors.New("textenc: config: attention_bias is true; Qwen3-VL has no attention biases")
	}
	if c.Text.Act != "" && c.Text.Act != "silu" {
		return c, fmt.Errorf("textenc: config: text hidden_act %q, want silu", c.Text.Act)
	}
	return c, c.Validate()
}

// Validate reports every inconsistency at once.
func (c Qwen) Validate() error {
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
	if s := t.RoPE.Section; s[0]+s[1]+s[2] != t.HeadDim/2 || s[0] < 0 || s[1] < 0 || s[2] < 0 {
		bad("mrope_section %v does not split the %d rotary pairs of head_dim %d", s, t.HeadDim/2, t.HeadDim)
	}
	if !t.RoPE.Interleaved {
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
	if side := v.GridSide(); side*side != v.NumPositions || side < 2 {
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

// GridSide is the side of the learned position grid (the integer square
// root of NumPositions, rounded down).
func (v QwenVision) GridSide() int {
	s := 0
	for (s+1)*(s+1) <= v.NumPositions {
		s++
	}
	return s
}

// LayerParams is one language layer: attention, q/k norms, SwiGLU MLP and
// the two RMSNorms (487.6 M in the release).
func (t QwenText) LayerParams() int64 {
	h, hd := int64(t.Hidden), int64(t.HeadDim)
	q, kv := int64(t.Heads)*hd, int64(t.KVHeads)*hd
	return h*q + 2*h*kv + q*h + 3*h*int64(t.Intermediate) + 2*h + 2*hd
}

// EmbedParams is the token embedding table (0.78 B in the release); the
// untied lm_head is the same size.
func (t QwenText) EmbedParams() int64 { return int64(t.Vocab) * int64(t.Hidden) }

// Params is the vision tower: patch embedding, learned positions, the
// blocks, and the main and deepstack mergers (0.58 B in the release).
func (v QwenVision) Params() int64 {
	h, mlp := int64(v.Hidden), int64(v.Intermediate)
	block := 4*h + (3*h*h + 3*h) + (h*h + h) + (mlp*h + mlp) + (h*mlp + h)
	merged := h * int64(v.SpatialMerge*v.SpatialMerge)
	merger := merged*merged + merged + int64(v.OutHidden)*merged + int64(v.OutHidden)
	// The main merger normalises each patch (h wide) before the shuffle;
	// the deepstack mergers the shuffled vector (merged wide).
	norms := 2*h + int64(len(v.Deepstack))*2*merged
	patch := h*int64(v.InChannels*v.TemporalPatch*v.Patch*v.Patch) + h
	return int64(v.Depth)*block + int64(1+len(v.Deepstack))*merger + norms + patch + int64(v.NumPositions)*h
}

// Grid is the patch grid of a height x width picture.
func (v QwenVision) Grid(height, width int) (gh, gw int) { return height / v.Patch, width / v.Patch }

// HeadDim is the vision attention head width.
func (v QwenVision) HeadDim() int { return v.Hidden / v.Heads }

// MergeCell is the patches merged into one language token (2x2).
func (v QwenVision) MergeCell() int { return v.SpatialMerge * v.SpatialMerge }
