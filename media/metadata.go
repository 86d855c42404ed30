package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ReadMetadata reads a file's container tags with the default Tools.
func ReadMetadata(ctx context.Context, path string) (map[string]string, error) {
	return Default().ReadMetadata(ctx, path)
}

// ReadMetadata returns the container (format) tags FFprobe reports for
// path, such as the ones EncodeOptions.Metadata wrote; a file without tags
// gives an empty map. Stills have no container tags and give an empty map
// without running FFprobe.
func (t *Tools) ReadMetadata(ctx context.Context, path string) (map[string]string, error) {
	if err := checkInput("read metadata of", path); err != nil {
		return nil, err
	}
	head, err := readHead(path)
	if err != nil {
		return nil, fmt.Errorf("media: read metadata of %s: %w", path, err)
	}
	if sniffImage(head) != "" {
		return map[string]string{}, nil
	}
	bin, err := t.ffprobe()
	if err != nil {
		return nil, err
	}
	args := append([]string{"-hide_banner", "-v", "error", "-of", "json", "-show_entries", "format_tags"}, inputArgs(path)...)
	out, err := t.output(ctx, bin, probeTimeout, args...)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrTimeout) {
			return nil, fmt.Errorf("media: read metadata of %s: %w", path, err)
		}
		return nil, fmt.Errorf("media: read metadata of %s: not a video or audio file FFmpeg can read (%v)", path, err)
	}
	var p struct {
		Format struct {
			Tags map[string]string `json:"tags"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &p); err != nil {
		return nil, fmt.Errorf("media: read metadata of %s: unreadable ffprobe output: %w", path, err)
	}
	if p.Format.Tags == nil {
		return map[string]string{}, nil
	}
	return p.Format.Tags, nil
}
