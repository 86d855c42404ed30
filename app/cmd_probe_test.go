package app

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/media"
)

func TestProbeCommand(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("skip: ffmpeg not on PATH")
	}
	dir := t.TempDir()
	wav := filepath.Join(dir, "tone.wav")
	out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i",
		"sine=frequency=440:sample_rate=22050", "-t", "0.5", wav).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, out)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"probe", wav, "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("output is not one JSON object: %v: %q", err, stdout.String())
	}
	for _, key := range []string{"path", "kind", "width", "height", "duration_s", "fps", "audio_channels", "audio_rate"} {
		if _, ok := got[key]; !ok {
			t.Errorf("JSON lacks %q: %s", key, stdout.String())
		}
	}
	if got["kind"] != media.KindAudio || got["audio_rate"] != 22050.0 || got["audio_channels"] != 1.0 {
		t.Errorf("got %s", stdout.String())
	}

	bad := filepath.Join(dir, "bad.png")
	if err := os.WriteFile(bad, []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main([]string{"probe", "--json", wav, bad}, &stdout, &stderr); code != 1 {
		t.Fatalf("bad file: exit %d, want 1", code)
	}
	if lines := strings.Count(stderr.String(), "\n"); lines != 1 || !strings.Contains(stderr.String(), "bad.png") {
		t.Errorf("want one error line naming bad.png, got %q", stderr.String())
	}
	if code := Main([]string{"probe"}, &stdout, &stderr); code != 2 {
		t.Errorf("no files: exit %d, want 2", code)
	}
	stdout.Reset()
	if code := Main([]string{"probe", "--tools", "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("--tools: exit %d: %s", code, stderr.String())
	}
	var tools toolsReport
	if err := json.Unmarshal(stdout.Bytes(), &tools); err != nil || tools.FFmpegVersion == "" || tools.H264Encoder == "" || !tools.AAC {
		t.Errorf("--tools: %q (%v)", stdout.String(), err)
	}
}
