package textenc

import (
	"fmt"
	"os"

	"h3studio/engine/arch"
)

// ReleaseLayers is how many language layers MiniMax-H3 runs: the first 50
// of Qwen3-VL-32B's 64, read out before the final norm.
const ReleaseLayers = arch.QwenLayersUsed

// Config is text_encoder/config.json, declared once in engine/arch. It is
// cross-checked against the tensor shapes by Model loading.
type Config = arch.Qwen

// TextConfig describes the language model (text_config).
type TextConfig = arch.QwenText

// VisionConfig describes the vision tower (vision_config).
type VisionConfig = arch.QwenVision

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

// ParseConfig is arch.ParseQwen: config.json bytes with Qwen3-VL's
// defaults filled in, validated.
func ParseConfig(data []byte) (Config, error) { return arch.ParseQwen(data) }
