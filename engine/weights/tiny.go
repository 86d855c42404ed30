package weights

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"h3studio/engine/arch"
	"h3studio/engine/weights/safetensors"
)

// TinyOptions configures WriteTiny.
type TinyOptions struct {
	// Seed picks the random weights; the same seed writes the same bytes.
	Seed uint64
	// Aligned16 writes shards whose data sections start on 16 bytes
	// (zero-copy loadable). The default reproduces the release's 8 mod 16.
	Aligned16 bool
}

// tinyQwen is arch's tiny Qwen3-VL with the tiny tokenizer's special ids.
func tinyQwen() *arch.Qwen { return withTinySpecials(arch.TinyQwen()) }

// withTinySpecials gives q the tiny tokenizer's special ids (the encoder
// refuses a tokenizer whose vision ids differ from its config's).
func withTinySpecials(q *arch.Qwen) *arch.Qwen {
	q.ImageToken, q.VideoToken = tinySpecialID("<|image_pad|>"), tinySpecialID("<|video_pad|>")
	q.VisionStart, q.VisionEnd = tinySpecialID("<|vision_start|>"), tinySpecialID("<|vision_end|>")
	q.Text.BOSToken, q.Text.EOSToken = tinySpecialID("<|endoftext|>"), tinySpecialID("<|im_end|>")
	return q
}

// tinyAudioVAE is arch's tiny audio VAE with latent statistics drawn from
// seed (the network is random, so no real statistics exist).
func tinyAudioVAE(seed uint64) *arch.AudioVAE { return withSeededStats(arch.TinyAudioVAE(), seed) }

// withSeededStats gives the audio VAE a of a random network latent
// statistics drawn from seed.
func withSeededStats(a *arch.AudioVAE, seed uint64) *arch.AudioVAE {
	r := rand.New(rand.NewPCG(seed, 0xa0d10))
	a.LatentsMean, a.LatentsStd = make([]float64, a.LatentChannels), make([]float64, a.LatentChannels)
	for i := range a.LatentsMean {
		a.LatentsMean[i] = float64(float32(0.5 * r.NormFloat64()))
		a.LatentsStd[i] = float64(float32(0.5 + r.Float64()))
	}
	return a
}

// tinyPartitions are the two partitions: same architecture, different DiT
// weights, byte-identical encoders and VAEs (as in the release).
var tinyPartitions = []struct{ dir, name string }{{"FL2VA", "fl2va"}, {"Ref2VA", "ref2va"}}

// TinyVersion names the tiny snapshot's format. Bump it whenever WriteTiny's
// output changes (engine/dit's fixture checksum test fails when it does):
// caches of generated tiny models are keyed by it, so a newer binary never
// reuses an older snapshot.
const TinyVersion = 3

// WriteTiny writes a complete random-weight snapshot in the release's
// layout, tensor names and config keys into dir (which must not exist or
// be empty). It writes into a temporary sibling and renames it into place.
func WriteTiny(dir string, o TinyOptions) (err error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("weights: %s is not empty; choose a new folder for the tiny snapshot", dir)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err = writeJSON(filepath.Join(tmp, "model_index.json"), map[string]any{
		"_class_name": "MiniMaxH3ModularPipeline", "_h3studio_tiny": map[string]any{"seed": o.Seed},
	}); err != nil {
		return err
	}
	for i, p := range tinyPartitions {
		if err = writeTinyPartition(filepath.Join(tmp, p.dir), p.name, o, uint64(i)); err != nil {
			return err
		}
	}
	os.Remove(dir) // an empty destination is replaced
	return os.Rename(tmp, dir)
}

func writeTinyPartition(dir, name string, o TinyOptions, ditSalt uint64) error {
	align := safetensors.Align8Mod16
	if o.Aligned16 {
		align = safetensors.Align16
	}
	pw := partitionWriter{
		dit: arch.TinyDiT(), qwen: tinyQwen(), video: arch.TinyVideoVAE(), audio: tinyAudioVAE(o.Seed),
		seed: o.Seed, ditSeed: o.Seed + 1000*ditSalt,
		tensors: func(dir string, specs specList, seed uint64, shards int) error {
			return writeSharded(dir, specs, seed, shards, align)
		},
	}
	return pw.write(dir, name)
}

// partitionWriter writes one partition of a generated snapshot in the
// release's layout: its four configs, the tokenizer and processor files,
// and each component's tensors through tensors (WriteTiny's random
// shards, WriteSynthetic's manifests).
type partitionWriter struct {
	dit           *arch.DiT
	qwen          *arch.Qwen
	video         *arch.VideoVAE
	audio         *arch.AudioVAE
	seed, ditSeed uint64
	tensors       func(dir string, specs specList, seed uint64, shards int) error
}

func (pw partitionWriter) write(dir, name string) error {
	tasks := map[string][]string{"fl2va": {"t2va", "fl2va"}, "ref2va": {"ref2va"}}[name]
	idx := map[string]any{
		"_class_name": "MiniMaxH3Pipeline",
		"_minimax_h3": map[string]any{
			"schema_version": 1, "partition": name, "tasks": tasks, "task_aliases": map[string]any{},
			"sigma_shift_scales": map[string]float64{"video": 12.0, "audio": 3.0},
		},
		"transformer": []string{"minimax_h3", "MiniMaxH3DiTModel"}, "text_encoder": []string{"transformers", "Qwen3VLForConditionalGeneration"},
		"tokenizer": []string{"transformers", "Qwen2TokenizerFast"}, "processor": []string{"transformers", "Qwen3VLProcessor"},
		"video_vae": []string{"minimax_h3", "MiniMaxH3VideoVAE"}, "audio_vae": []string{"minimax_h3", "MiniMaxH3AudioVAE"},
	}
	dit, qwen, video, audio := pw.dit, pw.qwen, pw.video, pw.audio
	tok, err := tinyTokenizerFiles()
	if err != nil {
		return err
	}
	steps := []func() error{
		func() error { return writeJSON(filepath.Join(dir, "model_index.json"), idx) },
		func() error { return writeJSON(filepath.Join(dir, "transformer", "config.json"), dit) },
		func() error { return pw.tensors(filepath.Join(dir, "transformer"), ditSpecs(dit), pw.ditSeed, 2) },
		func() error { return writeJSON(filepath.Join(dir, "text_encoder", "config.json"), qwen) },
		func() error {
			return pw.tensors(filepath.Join(dir, "text_encoder"), textEncoderSpecs(qwen), pw.seed, 2)
		},
		func() error { return writeJSON(filepath.Join(dir, "video_vae", "config.json"), video) },
		func() error { return writeJSON(filepath.Join(dir, "video_vae", "source", "config.json"), video.Source) },
		func() error {
			return pw.tensors(filepath.Join(dir, "video_vae", "source"), videoVAESpecs(video), pw.seed, 1)
		},
		func() error { return writeJSON(filepath.Join(dir, "audio_vae", "config.json"), audio) },
		func() error {
			return writeJSON(filepath.Join(dir, "audio_vae", "metadata.json"), map[string]any{"metadata": map[string]any{"kwargs": audio.Model}})
		},
		func() error { return writeFile(filepath.Join(dir, "audio_vae", "config.yaml"), audioYAML(audio.Model)) },
		func() error { return pw.tensors(filepath.Join(dir, "audio_vae"), audioVAESpecs(audio), pw.seed, 1) },
	}
	for _, sub := range []string{"tokenizer", "text_encoder", "processor"} {
		for n, b := range tok {
			p, data := filepath.Join(dir, sub, n), b
			steps = append(steps, func() error { return writeFile(p, data) })
		}
	}
	for _, sub := range []string{"text_encoder", "processor"} {
		p := filepath.Join(dir, sub)
		steps = append(steps,
			func() error {
				return writeJSON(filepath.Join(p, "preprocessor_config.json"), qwenPreprocessor("Qwen2VLImageProcessorFast", 65536, 16777216))
			},
			func() error {
				return writeJSON(filepath.Join(p, "video_preprocessor_config.json"), qwenPreprocessor("Qwen3VLVideoProcessor", 4096, 25165824))
			})
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// qwenPreprocessor is a Qwen3-VL processor config with the release's pixel
// budget (minPx..maxPx; the video processor's covers all sampled frames),
// so the tiny model's vision tokens follow the release's rules.
func qwenPreprocessor(class string, minPx, maxPx int) map[string]any {
	c := map[string]any{
		"patch_size": 16, "temporal_patch_size": 2, "merge_size": 2,
		"image_mean": []float64{0.5, 0.5, 0.5}, "image_std": []float64{0.5, 0.5, 0.5},
		"size": map[string]int{"shortest_edge": minPx, "longest_edge": maxPx},
	}
	key := "image_processor_type"
	if class == "Qwen3VLVideoProcessor" {
		key = "video_processor_type"
		c["do_sample_frames"] = false
	}
	c[key] = class
	return c
}

func audioYAML(k arch.AudioVAEModel) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "model:\n  sample_rate: %d\n  vae_latent_channels: %d\n  latent_dim: %d\n  decoder_dim: %d\n",
		k.SampleRate, k.LatentChannels, k.LatentDim, k.DecoderDim)
	fmt.Fprintf(&b, "  decoder_rates: %v\n  encoder_dim: %d\n  encoder_rates: %v\n", jsonList(k.DecoderRates), k.EncoderDim, jsonList(k.EncoderRates))
	return b.Bytes()
}

func jsonList(v []int) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// writeSharded writes specs as n shards (model-0000i-of-0000n plus an
// index), or as model.safetensors when n is 1.
func writeSharded(dir string, specs specList, seed uint64, n int, align safetensors.Alignment) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var names []string
	per := (len(specs) + n - 1) / n
	for s := 0; s < n; s++ {
		w := &safetensors.Writer{Align: align, Metadata: map[string]string{"format": "pt"}}
		for _, sp := range specs[s*per : min(len(specs), (s+1)*per)] {
			if err := w.AddFloat32(sp.name, safetensors.DType(sp.dtype), sp.shape, sp.values(seed)); err != nil {
				return err
			}
		}
		name := "model.safetensors"
		if n > 1 {
			name = fmt.Sprintf("model-%05d-of-%05d.safetensors", s+1, n)
		}
		if err := w.WriteFile(filepath.Join(dir, name)); err != nil {
			return err
		}
		names = append(names, name)
	}
	if n == 1 {
		return nil
	}
	return safetensors.WriteIndex(dir, names)
}

// values draws the tensor's deterministic contents: each tensor has its
// own stream (seed and name), so adding a tensor changes no other.
func (sp tensorSpec) values(seed uint64) []float32 {
	n := int64(1)
	for _, d := range sp.shape {
		n *= d
	}
	if sp.init == initFixed {
		return sp.fixed
	}
	h := fnv.New64a()
	h.Write([]byte(sp.name))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	fanIn := int64(1)
	for _, d := range sp.shape[1:] {
		fanIn *= d
	}
	out := make([]float32, n)
	for i := range out {
		z := r.NormFloat64()
		switch sp.init {
		case initWeight:
			out[i] = float32(z / math.Sqrt(float64(fanIn)))
		case initNorm:
			out[i] = float32(1 + 0.1*z)
		default:
			out[i] = float32(0.02 * z)
		}
	}
	return out
}

// marshalJSON indents like the release's files and keeps '<' and '>'
// literal (special tokens are full of them).
func marshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	err := enc.Encode(v)
	return b.Bytes(), err
}

func writeJSON(path string, v any) error {
	b, err := marshalJSON(v)
	if err != nil {
		return err
	}
	return writeFile(path, b)
}

func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// EnsureTiny makes dir hold the tiny snapshot for o: it writes one when
// dir does not exist and otherwise checks that what is there discovers as
// a snapshot (for an app that keeps its default model in a cache folder).
func EnsureTiny(dir string, o TinyOptions) error {
	if _, err := os.Stat(dir); err == nil {
		_, err := Discover(dir)
		return err
	}
	return WriteTiny(dir, o)
}
