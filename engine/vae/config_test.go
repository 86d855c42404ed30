package vae

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"h3studio/engine/weights"
)

// releaseAudioMetadata is FL2VA/audio_vae/metadata.json of the release.
const releaseAudioMetadata = `{"metadata": {"kwargs": {"attn_proj": true, "decoder_dim": 1024,
 "decoder_rates": [5, 5, 2, 2, 2, 2, 2], "decoder_type": "bigvgan", "encoder_dim": 64,
 "encoder_rates": [2, 4, 4, 5, 5], "latent_dim": 2048, "sample_rate": 32000, "vae_latent_channels": 32}}}`

func releaseAudioConfigJSON() []byte {
	mean, std := make([]float64, 32), make([]float64, 32)
	for i := range std {
		std[i] = 1
	}
	b, _ := json.Marshal(map[string]any{"_class_name": "MiniMaxH3AudioVAE", "output_channel": 2, "sample_rate": 32000,
		"latent_channels": 32, "latents_mean": mean, "latents_std": std})
	return b
}

func TestParseAudioConfigRelease(t *testing.T) {
	c, err := ParseAudioConfig(releaseAudioConfigJSON(), []byte(releaseAudioMetadata))
	if err != nil {
		t.Fatal(err)
	}
	if c.Hop() != 800 || c.Model.Heads != 8 || !slices.Equal(c.Model.DecoderKernels, []int{9, 9, 4, 4, 4, 4, 4}) {
		t.Errorf("hop %d, heads %d, kernels %v; want 800, 8, release kernels", c.Hop(), c.Model.Heads, c.Model.DecoderKernels)
	}
}

func TestParseConfigErrors(t *testing.T) {
	// every problem is reported at once
	bad := strings.NewReplacer(`"decoder_rates": [5, 5, 2, 2, 2, 2, 2]`, `"decoder_rates": [5, 5, 2, 2, 2, 2]`,
		`"decoder_type": "bigvgan"`, `"decoder_type": "hifigan"`).Replace(releaseAudioMetadata)
	_, err := ParseAudioConfig(releaseAudioConfigJSON(), []byte(bad))
	for _, want := range []string{"decoder_type", "decoder_kernel_sizes", "do not undo encoder_rates"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("audio: error %v does not mention %q", err, want)
		}
	}
	v := releaseVideoConfig(t)
	v.Source.ChMult[2] = 0
	v.Source.PaddingMode = "zeros"
	v.LatentsStd[5] = 0
	v.TileSize = 250
	err = v.Validate()
	for _, want := range []string{"level 2 has 0 channels", "reflect", "latents_std[5]", "vae_tile_size 250"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("video: error %v does not mention %q", err, want)
		}
	}
	if _, err := ParseVideoConfig([]byte(`{`), []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "video_vae/config.json") {
		t.Errorf("truncated wrapper: %v", err)
	}
}

// A checkpoint that lacks tensors or has wrong shapes is refused with one
// error naming all of them, before anything is allocated.
func TestLoadReportsEveryMissingTensor(t *testing.T) {
	src := openFixture(t, "video_weights_decoder")
	cfg := videoConfig(t, src)
	cfg.Source.ViT.Layers = 3 // the fixture has 2 blocks
	cfg.Source.ViT.Heads = 4  // and width 64, not 128
	_, err := LoadVideoDecoder(cpuBackend(t), src, cfg, DecodeOptions{})
	if err == nil {
		t.Fatal("loaded a decoder whose config disagrees with its tensors")
	}
	msg := err.Error()
	for _, want := range []string{"missing decoder.transformer_blocks.2.attn.to_qkv.weight", "decoder.x_embedder.weight: shape [64 24], want [128 24]"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q:\n%s", want, msg)
		}
	}
	t.Logf("%d problems reported", strings.Count(msg, "\n")+1)
}

// Weights computed on the host (weight norm folded, conv3d kernels
// reordered, snake parameters) are checked like stored ones: each missing
// or misshaped source tensor is named by its checkpoint name, in one error.
func TestLoadNamesTransformedTensors(t *testing.T) {
	copyOf := func(name string) (*memSource, weights.Source) {
		fx := openFixture(t, name)
		m := newMemSource()
		for _, info := range fx.Tensors() {
			v, err := weights.Float32(fx, info.Name)
			if err != nil {
				t.Fatal(err)
			}
			m.data[info.Name], m.shape[info.Name] = v, info.Shape
		}
		return m, fx
	}
	audio, afx := copyOf("audio_weights_decoder")
	delete(audio.data, "decoder.conv_pre.weight_g")
	audio.shape["decoder.resblocks.1.convs2.0.weight_v"] = []int64{1, 2, 3}
	delete(audio.data, "decoder.resblocks.0.activations.3.upsample.filter")
	_, err := LoadAudio(cpuBackend(t), audio, audioConfig(t, afx), AudioDecoderPart, AudioOptions{})
	video, vfx := copyOf("video_weights_encoder")
	video.shape["encoder.down.0.block.0.conv1.weight"] = []int64{1, 2, 3}
	_, verr := LoadVideoEncoder(cpuBackend(t), video, videoConfig(t, vfx))
	if err == nil || verr == nil {
		t.Fatalf("loaded damaged checkpoints: audio %v, video %v", err, verr)
	}
	msg := err.Error() + "\n" + verr.Error()
	for _, want := range []string{
		"missing decoder.conv_pre.weight_g",
		"decoder.resblocks.1.convs2.0.weight_v: shape [1 2 3], want [",
		"missing decoder.resblocks.0.activations.3.upsample.filter",
		"encoder.down.0.block.0.conv1.weight: shape [1 2 3], want [",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "\n") + 1; n != 4 { // one line per problem
		t.Errorf("%d lines reported, want 4:\n%s", n, msg)
	}
}

// The snapshot layout: video_vae/config.json beside video_vae/source/config.json,
// audio_vae/config.json beside audio_vae/metadata.json.
func TestReadConfigFiles(t *testing.T) {
	dir := t.TempDir()
	src := openFixture(t, "video_weights_encoder")
	md := src.Metadata()
	asrc := openFixture(t, "audio_weights_encoder")
	amd := asrc.Metadata()
	files := map[string]string{
		"video_vae/config.json":        md["video_vae/config.json"],
		"video_vae/source/config.json": md["video_vae/source/config.json"],
		"audio_vae/config.json":        amd["audio_vae/config.json"],
		"audio_vae/metadata.json":      amd["audio_vae/metadata.json"],
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	v, err := ReadVideoConfig(filepath.Join(dir, "video_vae/source/config.json"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := ReadAudioConfig(filepath.Join(dir, "audio_vae/config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if v.SpatialRatio() != 16 || v.TemporalRatio() != 4 || v.TileSize != 32 || a.Hop() != 800 || a.Model.Heads != 2 {
		t.Errorf("read ratio %d/%d tile %d, hop %d heads %d; want the tiny model's 16/4, 32, 800, 2",
			v.SpatialRatio(), v.TemporalRatio(), v.TileSize, a.Hop(), a.Model.Heads)
	}
	if _, err := ReadAudioConfig(filepath.Join(dir, "missing/config.json")); err == nil {
		t.Error("a missing config was read")
	}
}
