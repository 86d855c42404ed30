package arch

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The release configs against the parameter counts of the shared H3 facts
// (§1 sizes table, §2, §4, §7).
func TestReleaseParams(t *testing.T) {
	m, err := Release()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.DiT.Shapes()); n != 535 {
		t.Errorf("release DiT has %d tensors, want 535", n)
	}
	for _, c := range []struct {
		name      string
		got, want float64
		rel       float64
	}{
		{"DiT", float64(m.DiT.Params()), 33.12e9, 0.003},
		{"Qwen layer", float64(m.Qwen.Text.LayerParams()), 487.6e6, 0.001},
		{"Qwen embedding", float64(m.Qwen.Text.EmbedParams()), 0.78e9, 0.01},
		{"Qwen full (64 layers, lm_head, vision)", float64(64*m.Qwen.Text.LayerParams() + 2*m.Qwen.Text.EmbedParams() + m.Qwen.Vision.Params()), 33.36e9, 0.003},
		{"video VAE encoder", float64(m.VideoVAE.EncoderParams()), 0.18e9, 0.1},
		{"video VAE decoder", float64(m.VideoVAE.DecoderParams()), 2.42e9, 0.01},
		{"video VAE F32 bytes", 4 * float64(m.VideoVAE.EncoderParams()+m.VideoVAE.DecoderParams()), 10.4e9, 0.02},
		// The facts' "0.56 GB" is GiB: 0.151 B params x 4 B = 0.605e9 B.
		{"audio VAE F32 GiB", 4 * float64(m.AudioVAE.Params()) / (1 << 30), 0.56, 0.01},
	} {
		t.Logf("%s: %.4g", c.name, c.got)
		if math.Abs(c.got-c.want) > c.rel*c.want {
			t.Errorf("%s = %.4g, want %.4g ±%.1f%%", c.name, c.got, c.want, 100*c.rel)
		}
	}
	if len(m.AudioVAE.LatentsMean) != 0 || len(m.Assumed) != 0 {
		t.Errorf("release audio statistics %v, assumed %v", m.AudioVAE.LatentsMean, m.Assumed)
	}
}

// The tiny model's configs are valid and survive a write and re-read
// (the tiny writer marshals these very values).
func TestTinyRoundTrip(t *testing.T) {
	m := Tiny()
	if err := m.DiT.Check(); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m.DiT)
	if err != nil {
		t.Fatal(err)
	}
	if d, err := ParseDiT(b); err != nil || d.Params() != m.DiT.Params() {
		t.Fatalf("DiT round trip: %v", err)
	}
	b, err = json.Marshal(m.Qwen)
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseQwen(b)
	if err != nil || q.Text.RoPE != m.Qwen.Text.RoPE || q.Vision.Params() != m.Qwen.Vision.Params() {
		t.Fatalf("Qwen round trip: %+v, %v", q.Text.RoPE, err)
	}
	if err := m.VideoVAE.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := m.AudioVAE.validate(false); err != nil {
		t.Fatal(err)
	}
	if err := m.AudioVAE.Validate(); err == nil || !strings.Contains(err.Error(), "latents_mean") {
		t.Errorf("tiny audio without statistics validated as renderable: %v", err)
	}
}

// transformers 5 spells the RoPE settings as rope_parameters; keys it
// leaves out keep Qwen3-VL's defaults.
func TestParseQwenRopeParameters(t *testing.T) {
	var raw map[string]any
	if err := json.Unmarshal(ReleaseQwenJSON(), &raw); err != nil {
		t.Fatal(err)
	}
	text := raw["text_config"].(map[string]any)
	delete(text, "rope_scaling")
	delete(text, "rope_theta")
	text["rope_parameters"] = map[string]any{"rope_type": "default", "rope_theta": 1e6, "mrope_section": []int{16, 24, 24}}
	raw["vision_config"].(map[string]any)["rope_parameters"] = map[string]any{"rope_theta": 500.0}
	b, _ := json.Marshal(raw)
	q, err := ParseQwen(b)
	if err != nil {
		t.Fatal(err)
	}
	if q.Text.RoPETheta != 1e6 || q.Text.RoPE.Section != [3]int{16, 24, 24} || !q.Text.RoPE.Interleaved || q.Vision.RoPETheta != 500 {
		t.Errorf("text theta %g, rope %+v, vision theta %g", q.Text.RoPETheta, q.Text.RoPE, q.Vision.RoPETheta)
	}
}

// ReadModel reads the configs a snapshot has, takes the release's for the
// rest and says which, and refuses a config that is present but wrong.
func TestReadModel(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	b, err := json.Marshal(TinyDiT())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadModel(Files{DiT: path})
	if err != nil {
		t.Fatal(err)
	}
	if m.DiT.Hidden != 64 || m.Qwen.Text.Hidden != 5120 || !slices.Equal(m.Assumed, []string{"text_encoder", "video_vae", "audio_vae"}) {
		t.Errorf("DiT hidden %d, Qwen hidden %d, assumed %v", m.DiT.Hidden, m.Qwen.Text.Hidden, m.Assumed)
	}
	if err := os.WriteFile(path, []byte(`{"hidden_size": 64}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadModel(Files{DiT: path}); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("incomplete DiT config: %v", err)
	}
}

// A clip's frames the encoder runs over: whole clips but the last, cut
// after the frames its kept steps see.
func TestEncodedFrames(t *testing.T) {
	for _, c := range []struct{ n, clip, ratio, drop, want int }{
		{56, 17, 4, 3, 56}, // 17+17+17+5: the release's 17k+5
		{39, 17, 4, 3, 39},
		{36, 17, 4, 3, 39}, // the last clip's 5 frames, 3 of them padding
		{17, 17, 4, 3, 5},
		{18, 17, 4, 3, 22},
		{30, 17, 4, 0, 34},     // nothing dropped: whole clips
		{20, 16, 4, 1, 13 + 9}, // 16-frame clips have 4 steps, seen by 13 frames
	} {
		if got := EncodedFrames(c.n, c.clip, c.ratio, c.drop); got != c.want {
			t.Errorf("EncodedFrames(%d, clip %d, ratio %d, drop %d) = %d, want %d", c.n, c.clip, c.ratio, c.drop, got, c.want)
		}
	}
}
