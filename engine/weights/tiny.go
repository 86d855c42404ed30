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

// TinyDiTConfig is the tiny DiT: 2 blocks at hidden 64, 3 heads of 32
// (inner 96, wider than the residual stream like the real 7168 > 5376),
// and a 4-entry rope table so 24 of 32 head dims rotate (3 axes x 4
// pairs x 2), the same 3/4 split as the real 96 of 128.
func TinyDiTConfig() DiTConfig {
	const hidden = 64
	return DiTConfig{
		ClassName: "MiniMaxH3DiTModel", HiddenSize: hidden, NumLayers: 2, TokenRefinerNumLayers: 2,
		NumAttentionHeads: 3, AttentionHeadDim: 32, FFNHiddenSize: 128,
		LatentsDim: 24, AudioLatentsDim: 32, PatchSize: []int64{1, 2, 2}, TextDim: 64,
		TimestepInputDim: 32, TimeEmbedHiddenSize: hidden, TimeEmbedDim: hidden / 2, RopeInvFreqLen: 4,
		NormEps: 1e-5, QKNormEps: 1e-5, FinalNormEps: 1e-5,
		AdaLNOutFeatures: 6 * 3 * hidden, FinalAdaLNOutFeatures: 2 * hidden,
	}
}

// TinyQwenConfig is the tiny Qwen3-VL: 2 language layers at hidden 64
// (4 query heads and 2 KV heads of 32, mRoPE sections [6,5,5] summing to
// head_dim/2 like the real [24,20,20]), a 2-layer vision tower whose
// deepstack mergers tap layers 0 and 1, and the tiny tokenizer's ids.
func TinyQwenConfig() QwenConfig {
	return QwenConfig{
		Architectures: []string{"Qwen3VLForConditionalGeneration"}, ModelType: "qwen3_vl",
		ImageTokenID: tinySpecialID("<|image_pad|>"), VideoTokenID: tinySpecialID("<|video_pad|>"),
		VisionStartTokenID: tinySpecialID("<|vision_start|>"), VisionEndTokenID: tinySpecialID("<|vision_end|>"),
		TextConfig: QwenTextConfig{
			ModelType: "qwen3_vl_text", VocabSize: 576, HiddenSize: 64, IntermediateSize: 128,
			NumHiddenLayers: 2, NumAttentionHeads: 4, NumKeyValueHeads: 2, HeadDim: 32, HiddenAct: "silu",
			MaxPositionEmbeddings: 262144, RMSNormEps: 1e-6, RopeTheta: 5000000,
			RopeScaling: QwenRopeScaling{RopeType: "default", MropeSection: []int64{6, 5, 5}, MropeInterleaved: true},
			BOSTokenID:  tinySpecialID("<|endoftext|>"), EOSTokenID: tinySpecialID("<|im_end|>"),
			DType: "bfloat16", UseCache: true, InitializerRange: 0.02,
		},
		VisionConfig: QwenVisionConfig{
			ModelType: "qwen3_vl", Depth: 2, HiddenSize: 32, HiddenAct: "gelu_pytorch_tanh", IntermediateSize: 64,
			NumHeads: 2, InChannels: 3, PatchSize: 16, SpatialMergeSize: 2, TemporalPatchSize: 2,
			OutHiddenSize: 64, NumPositionEmbeddings: 64, DeepstackVisualIndexes: []int64{0, 1}, InitializerRange: 0.02,
		},
	}
}

// videoLatentsMean and videoLatentsStd are the release's 24-channel
// latent statistics (video_vae/config.json).
var videoLatentsMean = []float64{
	0.858090341091156, -0.9606591463088989, 1.0661640167236328, -0.5090325474739075,
	-0.2727581858634949, -1.3675414323806763, -0.2553254961967468, -0.26907554268836975,
	-0.5376840829849243, -0.0464097298681736, 0.6657370328903198, 0.19690127670764923,
	-0.5460608005523682, -0.4035342037677765, -0.23683024942874908, 0.25928452610969543,
	-0.30133944749832153, 0.211341992020607, -1.1206848621368408, 0.3581933379173279,
	-0.04225143790245056, 0.2604829967021942, 0.22864092886447906, 0.7056031823158264,
}

var videoLatentsStd = []float64{
	1.2223774194717407, 1.2767263650894165, 1.68317747116088865, 1.7549455165863037,
	1.5636216402053833, 2.194143533706665, 0.96531379222869875, 1.05698859691619875,
	0.841948926448822, 0.7729952931404114, 1.8955937623977661, 0.946841835975647,
	0.7996809482574463, 0.44988900423049925, 0.7197399735450745, 0.69362932443618775,
	2.961095094680786, 2.7694199085235595, 3.0496184825897215, 2.1088054180145265,
	3.276226282119751, 3.1627357006073, 2.28168129920959475, 2.6127843856811525,
}

// TinyVideoVAEConfigs returns the wrapper and network configs of the tiny
// video VAE: the real 16x spatial / 4x temporal compression and 24 latent
// channels over 4 narrow encoder levels, and a 2-layer ViT3D decoder.
func TinyVideoVAEConfigs() (VideoVAEConfig, VideoVAESourceConfig) {
	return VideoVAEConfig{
			ClassName: "MiniMaxH3VideoVAE", SourcePath: "source", LatentChannels: 24, VAEClipLength: 17, VAETokenDrop: 3,
			VAETileSize: 256, VAETileOverlapMin: 64, LatentsMean: videoLatentsMean, LatentsStd: videoLatentsStd,
		}, VideoVAESourceConfig{
			InChannels: 3, OutCh: 3, Ch: 32, ChMult: []int64{1, 1, 1, 2}, NumResBlocks: 1,
			SpaceDown: []int64{2, 2, 2, 2}, TimeDown: []int64{1, 2, 2, 1}, ZChannels: 24, EmbedDim: 24,
			VAERatio: 16, VAERatioT: 4, PaddingMode: "reflect", UseTIsolatedGN: true, CausalEncoder: true,
			Use3DConv: true, UseViTDecoder: true, PixelNormType: "imagenet", ScalingFactor: 1, ShiftFactor: 0,
			ViTDecoder: ViTDecoderConfig{NumLayers: 2, Heads: 2, DimHead: 16, RopeTheta: 100, RopeDimRatio: 0.75,
				NormType: "rms_norm", QKNormType: "rms_norm", FFNUseGated: true, FFNActivationFn: "silu"},
		}
}

// TinyAudioVAEConfigs returns the tiny audio VAE: the real hop (encoder
// strides 2,4,4,5,5; decoder rates 5,5,2,2,2,2,2) and 32 latent channels,
// with narrow widths (encoder 2 -> 64, decoder 128 -> 1) and 2 attention
// heads (latent_dim/heads must be a multiple of the 32 latent channels:
// 64/2, like the real 2048/8).
func TinyAudioVAEConfigs(seed uint64) (AudioVAEConfig, AudioVAEKwargs) {
	r := rand.New(rand.NewPCG(seed, 0xa0d10))
	mean, std := make([]float64, 32), make([]float64, 32)
	for i := range mean {
		mean[i] = float64(float32(0.5 * r.NormFloat64()))
		std[i] = float64(float32(0.5 + r.Float64()))
	}
	return AudioVAEConfig{ClassName: "MiniMaxH3AudioVAE", LatentChannels: 32, OutputChannel: 2, SampleRate: 32000, LatentsMean: mean, LatentsStd: std},
		AudioVAEKwargs{
			SampleRate: 32000, VAELatentChannels: 32, LatentDim: 64, DecoderDim: 128,
			DecoderRates: []int64{5, 5, 2, 2, 2, 2, 2}, DecoderType: "bigvgan", DecoderKernelSizes: []int64{9, 9, 4, 4, 4, 4, 4},
			EncoderDim: 2, EncoderRates: []int64{2, 4, 4, 5, 5}, AttnProj: true, NumAttentionHeads: 2,
			ResblockKernelSizes: []int64{3, 7, 11}, ResblockDilationSizes: [][]int64{{1, 3, 5}, {1, 3, 5}, {1, 3, 5}},
			EncoderDilations: []int64{1, 3, 9},
		}
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
	dit := TinyDiTConfig()
	qwen := TinyQwenConfig()
	vwrap, vsrc := TinyVideoVAEConfigs()
	acfg, akw := TinyAudioVAEConfigs(o.Seed)
	tok, err := tinyTokenizerFiles()
	if err != nil {
		return err
	}
	align := safetensors.Align8Mod16
	if o.Aligned16 {
		align = safetensors.Align16
	}
	steps := []func() error{
		func() error { return writeJSON(filepath.Join(dir, "model_index.json"), idx) },
		func() error { return writeJSON(filepath.Join(dir, "transformer", "config.json"), dit) },
		func() error {
			return writeSharded(filepath.Join(dir, "transformer"), ditSpecs(dit), o.Seed+1000*ditSalt, 2, align)
		},
		func() error { return writeJSON(filepath.Join(dir, "text_encoder", "config.json"), qwen) },
		func() error {
			return writeSharded(filepath.Join(dir, "text_encoder"), textEncoderSpecs(qwen), o.Seed, 2, align)
		},
		func() error { return writeJSON(filepath.Join(dir, "video_vae", "config.json"), vwrap) },
		func() error { return writeJSON(filepath.Join(dir, "video_vae", "source", "config.json"), vsrc) },
		func() error {
			return writeSharded(filepath.Join(dir, "video_vae", "source"), videoVAESpecs(vsrc), o.Seed, 1, align)
		},
		func() error { return writeJSON(filepath.Join(dir, "audio_vae", "config.json"), acfg) },
		func() error {
			return writeJSON(filepath.Join(dir, "audio_vae", "metadata.json"), map[string]any{"metadata": map[string]any{"kwargs": akw}})
		},
		func() error { return writeFile(filepath.Join(dir, "audio_vae", "config.yaml"), audioYAML(akw)) },
		func() error {
			return writeSharded(filepath.Join(dir, "audio_vae"), audioVAESpecs(akw), o.Seed, 1, align)
		},
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

func audioYAML(k AudioVAEKwargs) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "model:\n  sample_rate: %d\n  vae_latent_channels: %d\n  latent_dim: %d\n  decoder_dim: %d\n",
		k.SampleRate, k.VAELatentChannels, k.LatentDim, k.DecoderDim)
	fmt.Fprintf(&b, "  decoder_rates: %v\n  encoder_dim: %d\n  encoder_rates: %v\n", jsonList(k.DecoderRates), k.EncoderDim, jsonList(k.EncoderRates))
	return b.Bytes()
}

func jsonList(v []int64) string {
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
