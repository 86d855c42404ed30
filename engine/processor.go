package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"h3studio/engine/layout"
	"h3studio/engine/weights"
)

// processorConfig is the part of a Hugging Face Qwen3-VL image or video
// preprocessor config that sets the pixel budget.
type processorConfig struct {
	Size struct {
		ShortestEdge int `json:"shortest_edge"`
		LongestEdge  int `json:"longest_edge"`
	} `json:"size"`
	// Older processor files state the budget as min/max pixels.
	MinPixels int `json:"min_pixels"`
	MaxPixels int `json:"max_pixels"`
}

func (c processorConfig) bounds() (lo, hi int) {
	lo, hi = c.Size.ShortestEdge, c.Size.LongestEdge
	if lo == 0 {
		lo = c.MinPixels
	}
	if hi == 0 {
		hi = c.MaxPixels
	}
	return lo, hi
}

// qwenProcessor reads the partition's processor budget from
// processor/{preprocessor,video_preprocessor}_config.json (the files the
// official pipeline configures Hugging Face's processors from; text_encoder/
// holds copies in the release). A missing file leaves the release's values;
// a malformed one is an error naming it.
func qwenProcessor(part *weights.Partition) (layout.QwenProcessor, error) {
	var q layout.QwenProcessor
	if part == nil || part.Dir == "" {
		return q, nil
	}
	read := func(name string) (lo, hi int, err error) {
		for _, sub := range []string{"processor", "text_encoder"} {
			p := filepath.Join(part.Dir, sub, name)
			data, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return 0, 0, err
			}
			var c processorConfig
			if err := json.Unmarshal(data, &c); err != nil {
				return 0, 0, fmt.Errorf("%s is not a valid processor config (%v); restore it from the snapshot", p, err)
			}
			lo, hi = c.bounds()
			return lo, hi, nil
		}
		return 0, 0, nil
	}
	var err error
	if q.ImageMinPixels, q.ImageMaxPixels, err = read("preprocessor_config.json"); err != nil {
		return q, err
	}
	if q.VideoMinPixels, q.VideoMaxPixels, err = read("video_preprocessor_config.json"); err != nil {
		return q, err
	}
	return q, nil
}
