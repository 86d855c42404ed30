package app

import (
	"context"
	"encoding/json"
	"fmt"

	"h3studio/media"
)

// ClipRequestKey is the MP4 container tag that carries the request a clip
// was rendered from, as JSON with a version field, so dropping the clip on
// the studio window can restore its settings.
const ClipRequestKey = "h3studio_request"

// clipRequestVersion is bumped when the stored form changes in a way an
// older reader would misread.
const clipRequestVersion = 1

// clipRequest is the stored form: the request with its full input paths
// (restoring works on the machine that rendered it; elsewhere the missing
// files are reported when re-added) but without the output paths, which
// name the clip itself.
type clipRequest struct {
	Version int `json:"version"`
	Request
}

// clipMetadata is the container metadata for a clip rendered from r, or
// nil when the request is too large to store (a prompt of tens of KB).
func clipMetadata(r Request) map[string]string {
	r.Output, r.FramesDir = "", ""
	raw, err := json.Marshal(clipRequest{Version: clipRequestVersion, Request: r})
	if err != nil || len(raw) > media.MaxMetadataValue {
		return nil
	}
	return map[string]string{ClipRequestKey: string(raw)}
}

// RequestFromClip reads the request a clip was rendered from. ok is false
// for a file without the tag (any other video); an error means the file
// cannot be read or the tag is damaged or from a newer H3 Studio.
func RequestFromClip(ctx context.Context, path string) (Request, bool, error) {
	configureMedia()
	tags, err := media.ReadMetadata(ctx, path)
	if err != nil {
		return Request{}, false, err
	}
	raw, found := tags[ClipRequestKey]
	if !found {
		return Request{}, false, nil
	}
	var cr clipRequest
	if err := json.Unmarshal([]byte(raw), &cr); err != nil {
		return Request{}, false, fmt.Errorf("the H3 Studio settings stored in %s are damaged (%v); add it as a reference instead", path, err)
	}
	if cr.Version < 1 || cr.Version > clipRequestVersion {
		return Request{}, false, fmt.Errorf("%s was rendered by a newer H3 Studio (settings version %d); update H3 Studio to restore them", path, cr.Version)
	}
	return cr.Request, true, nil
}
