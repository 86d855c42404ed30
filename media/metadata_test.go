package media

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Custom container tags written by the encoder are what the FFprobe CLI
// reports (the independent reader) and what ReadMetadata returns, byte for
// byte, including quotes, newlines and non-ASCII text.
func TestMP4MetadataRoundTrip(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "tagged.mp4")
	value := `{"version":1,"prompt":"a \"fox\"\nin snow — naïve, 雪","seed":7}` + strings.Repeat("x", 4000)
	md := map[string]string{"h3studio_request": value, "comment": "made by a test"}
	frames := []Frame{movingFrame(64, 64, 0), movingFrame(64, 64, 1), movingFrame(64, 64, 2)}
	if err := tools.EncodeMP4(testCtx(t), dst, EncodeOptions{Width: 64, Height: 64, Metadata: md}, frames); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "format_tags", "-of", "json", dst).Output()
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Format struct {
			Tags map[string]string `json:"tags"`
		} `json:"format"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	got, err := tools.ReadMetadata(testCtx(t), dst)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range md {
		if rep.Format.Tags[k] != v {
			t.Errorf("ffprobe reports %s = %.80q, want %.80q", k, rep.Format.Tags[k], v)
		}
		if got[k] != v {
			t.Errorf("ReadMetadata %s = %.80q, want %.80q", k, got[k], v)
		}
	}
	// A clip made without tags has none of ours; a still has no container tags.
	plain := clip(t, dir, "plain.mp4", 64, 64, 24, 0.2, 0)
	if tags, err := tools.ReadMetadata(testCtx(t), plain); err != nil || tags["h3studio_request"] != "" {
		t.Errorf("plain clip: %v, %v", tags, err)
	}
	ffmpegGen(t, "-f", "lavfi", "-i", "testsrc=size=32x32", "-frames:v", "1", filepath.Join(dir, "still.png"))
	if tags, err := tools.ReadMetadata(testCtx(t), filepath.Join(dir, "still.png")); err != nil || len(tags) != 0 {
		t.Errorf("still: %v, %v", tags, err)
	}
}

func TestMP4MetadataRefused(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	for _, md := range []map[string]string{
		{"Bad Key": "x"},
		{"": "x"},
		{"big": strings.Repeat("x", MaxMetadataValue+1)},
		{"nul": "a\x00b"},
	} {
		_, err := tools.CreateMP4(testCtx(t), filepath.Join(dir, "x.mp4"), EncodeOptions{Width: 64, Height: 64, Metadata: md})
		if err == nil || !strings.Contains(err.Error(), "metadata") {
			t.Errorf("metadata %.40v: %v, want a metadata error", md, err)
		}
	}
	if got := dirEntries(t, dir); len(got) != 0 {
		t.Errorf("refused encodes left %v behind", got)
	}
}
