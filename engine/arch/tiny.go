package arch

import "slices"

// The embedded tiny model (engine/weights.WriteTiny): every stage of the
// release at a width that runs in seconds. The writer adds what belongs to
// its files rather than to the architecture: the tiny tokenizer's special
// ids and the seeded audio latent statistics.

// TinyDiT is the tiny DiT: 2 blocks at hidden 64, 3 heads of 32 (inner 96,
// wider than the residual stream like the real 7168 > 5376), and a 4-entry
// rope table so 24 of 32 head dims rotate (3 axes x 4 pairs x 2), the same
// 3/4 split as the real 96 of 128.
func TinyDiT() *DiT {
	const hidden = 64
	return &DiT{
		ClassName: "MiniMaxH3DiTModel", Hidden: hidden, Layers: 2, RefinerLayers: 2,
		Heads: 3, HeadDim: 32, FFN: 128,
		LatentChannels: 24, AudioChannels: 32, Patch: []int{1, 2, 2}, TextDim: 64,
		TimestepDim: 32, TimeHidden: hidden, TimeDim: hidden / 2, RopeFreqs: 4,
		NormEps: 1e-5, QKNormEps: 1e-5, FinalNormEps: 1e-5,
		AdaLNOut: AdaLNSlots * Modalities * hidden, FinalAdaLNOut: 2 * hidden,
	}
}

// TinyQwen is the tiny Qwen3-VL: 2 language layers at hidden 64 (4 query
// heads and 2 KV heads of 32, mRoPE sections [6,5,5] summing to head_dim/2
// like the real [24,20,20]) over a 576-token vocabulary, and a 2-layer
// vision tower whose deepstack mergers tap layers 0 and 1. Its special ids
// are Qwen3-VL's; the writer replaces them with the tiny tokenizer's.
func TinyQwen() *Qwen {
	q := qwenDefaults()
	q.Architectures, q.ModelType = []string{"Qwen3VLForConditionalGeneration"}, "qwen3_vl"
	q.Text = QwenText{
		ModelType: "qwen3_vl_text", Vocab: 576, Hidden: 64, Intermediate: 128,
		Layers: 2, Heads: 4, KVHeads: 2, HeadDim: 32, Act: "silu",
		MaxPositions: 262144, Eps: 1e-6, RoPETheta: 5000000,
		RoPE:  QwenRoPE{Type: "default", Section: [3]int{6, 5, 5}, Interleaved: true},
		DType: "bfloat16", UseCache: true, InitializerRange: 0.02,
	}
	q.Vision = QwenVision{
		ModelType: "qwen3_vl", Depth: 2, Hidden: 32, Act: "gelu_pytorch_tanh", Intermediate: 64,
		Heads: 2, InChannels: 3, Patch: 16, SpatialMerge: 2, TemporalPatch: 2,
		OutHidden: 64, NumPositions: 64, Deepstack: []int{0, 1}, InitializerRange: 0.02, RoPETheta: 10000,
	}
	return &q
}

// TinyVideoVAE is the tiny video VAE: the real 16x spatial / 4x temporal
// compression, 24 latent channels and latent statistics (the release's)
// over 4 narrow encoder levels, and a 2-layer ViT3D decoder.
func TinyVideoVAE() *VideoVAE {
	rel, err := ReleaseVideoVAE()
	if err != nil {
		panic("arch: embedded release video VAE config: " + err.Error()) // a build defect
	}
	return &VideoVAE{
		ClassName: "MiniMaxH3VideoVAE", SourcePath: "source", LatentChannels: 24, ClipLength: 17, TokenDrop: 3,
		TileSize: 256, TileOverlapMin: 64, LatentsMean: rel.LatentsMean, LatentsStd: rel.LatentsStd,
		Source: VideoVAESource{
			InChannels: 3, OutChannels: 3, Ch: 32, ChMult: []int{1, 1, 1, 2}, NumResBlocks: 1,
			SpaceDown: []int{2, 2, 2, 2}, TimeDown: []int{1, 2, 2, 1}, ZChannels: 24, EmbedDim: 24,
			VAERatio: 16, VAERatioT: 4, PaddingMode: "reflect", TIsolatedGN: true, CausalEncoder: true,
			Use3DConv: true, UseVitDecoder: true, PixelNormType: "imagenet", ScalingFactor: 1, ShiftFactor: 0,
			ViT: ViTDecoder{Layers: 2, Heads: 2, DimHead: 16, RopeTheta: 100, RopeDimRatio: 0.75,
				NormType: "rms_norm", QKNormType: "rms_norm", FFNGated: true, FFNAct: "silu"},
		},
	}
}

// TinyAudioVAE is the tiny audio VAE network: the real hop (encoder strides
// 2,4,4,5,5; decoder rates 5,5,2,2,2,2,2) and 32 latent channels, with
// narrow widths (encoder 2 -> 64, decoder 128 -> 1) and 2 attention heads
// (latent_dim/heads must be a multiple of the 32 latent channels: 64/2,
// like the real 2048/8). Its latent statistics are empty; the writer draws
// them from its seed.
func TinyAudioVAE() *AudioVAE {
	return &AudioVAE{
		ClassName: "MiniMaxH3AudioVAE", LatentChannels: 32, OutputChannel: 2, SampleRate: 32000,
		Model: AudioVAEModel{
			SampleRate: 32000, LatentChannels: 32, LatentDim: 64, DecoderDim: 128,
			DecoderRates: []int{5, 5, 2, 2, 2, 2, 2}, DecoderType: "bigvgan", DecoderKernels: slices.Clone(releaseAudioKernels),
			EncoderDim: 2, EncoderRates: []int{2, 4, 4, 5, 5}, AttnProj: true, Heads: 2,
		},
	}
}

// Tiny is the tiny model's architecture, for planning it by name.
func Tiny() *Model {
	return &Model{DiT: TinyDiT(), Qwen: TinyQwen(), VideoVAE: TinyVideoVAE(), AudioVAE: TinyAudioVAE()}
}
