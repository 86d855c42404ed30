package plan

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"h3studio/engine/arch"
)

// Dims are the architecture numbers the byte and FLOP arithmetic needs,
// computed by DimsOf from a snapshot's parsed configs (engine/arch).
type Dims struct {
	Hidden, Heads, HeadDim, FFN, Blocks, RefinerBlocks int // DiT
	TextDim, TimeIn, TimeHidden, TimeEmbed             int
	LatentCh, AudioCh                                  int
	QHidden, QInter, QHeads, QKVHeads, QHeadDim        int // Qwen language model
	QLayersUsed, QLayers, QVocab                       int
	QPositions                                         int // Qwen's context (max_position_embeddings; 0: unknown)
	VHidden, VMLP, VLayers, VDeepstack                 int // Qwen vision tower
	VAEEncParams, VAEDecParams, AudioVAEParams         int64
	DecDim, DecMLP, DecBlocks                          int // video VAE decoder (ViT3D)
	VAEClipLength                                      int // frames the video VAE encodes per chunk
	VAETimeRatio, VAETokenDrop                         int // a chunk's frames per latent step, and steps dropped at the end
	VAETile, VAETileOverlap                            int // its spatial tiles (pixels) and their least overlap

	// Parameter counts arch computes from the configs' tensor layouts.
	coreBlock, adaLNBlock, trunk, qLayer, qEmbed, vision int64
}

// DimsOf computes the planner's dimensions from parsed configs. Qwen's used
// layers are the first arch.QwenLayersUsed, or all of a shallower model.
func DimsOf(a *arch.Model) Dims {
	c, q, v, vae := a.DiT, a.Qwen.Text, a.Qwen.Vision, a.VideoVAE
	d := Dims{
		Hidden: c.Hidden, Heads: c.Heads, HeadDim: c.HeadDim, FFN: c.FFN, Blocks: c.Layers, RefinerBlocks: c.RefinerLayers,
		TextDim: c.TextDim, TimeIn: c.TimestepDim, TimeHidden: c.TimeHidden, TimeEmbed: c.TimeDim,
		LatentCh: c.LatentChannels, AudioCh: c.AudioChannels,
		QHidden: q.Hidden, QInter: q.Intermediate, QHeads: q.Heads, QKVHeads: q.KVHeads, QHeadDim: q.HeadDim,
		QLayersUsed: min(arch.QwenLayersUsed, q.Layers), QLayers: q.Layers, QVocab: q.Vocab, QPositions: q.MaxPositions,
		VHidden: v.Hidden, VMLP: v.Intermediate, VLayers: v.Depth, VDeepstack: len(v.Deepstack),
		VAEEncParams: vae.EncoderParams(), VAEDecParams: vae.DecoderParams(), AudioVAEParams: a.AudioVAE.Params(),
		DecDim: vae.Dim(), DecMLP: arch.FFNMult * vae.Dim(), DecBlocks: vae.Source.ViT.Layers, VAEClipLength: vae.ClipLength, VAETimeRatio: vae.TemporalRatio(), VAETokenDrop: vae.TokenDrop, VAETile: vae.TileSize, VAETileOverlap: vae.TileOverlapMin,
		trunk: c.TrunkParams(), qLayer: q.LayerParams(), qEmbed: q.EmbedParams(), vision: v.Params(),
	}
	d.coreBlock, d.adaLNBlock = c.BlockParams()
	return d
}

// CoreBlockParams is one DiT block's per-token linears: QKV, out, fc1, fc2
// (385.35 M), plus its norms.
func (d Dims) CoreBlockParams() int64 { return d.coreBlock }

// AdaLNBlockParams is one block's modulation projection: 6 slots x 3
// modalities x hidden, from the time embedding (260.2 M).
func (d Dims) AdaLNBlockParams() int64 { return d.adaLNBlock }

// TrunkParams are the DiT's non-block weights: refiner, condition and time
// projections, final layer, heads and patch projections.
func (d Dims) TrunkParams() int64 { return d.trunk }

// DiTParams is the whole transformer (33.12 B).
func (d Dims) DiTParams() int64 {
	return int64(d.Blocks)*(d.CoreBlockParams()+d.AdaLNBlockParams()) + d.TrunkParams()
}

// QLayerParams is one Qwen language layer (487.6 M).
func (d Dims) QLayerParams() int64 { return d.qLayer }

// QEmbedParams is the token embedding (0.78 B).
func (d Dims) QEmbedParams() int64 { return d.qEmbed }

// VisionParams is the vision tower with its merger and deepstack mergers.
func (d Dims) VisionParams() int64 { return d.vision }

// Model is a weights profile: bytes per parameter of each component, from a
// named profile or measured from a directory.
type Model struct {
	Name string `json:"name"`
	Dims Dims   `json:"-"`
	// Bytes per parameter. DiT and Qwen linears may be quantized; the VAEs
	// stay floating point.
	DiTBPP, QwenBPP, VisionBPP, VAEBPP, AudioVAEBPP float64
	// Lighter profiles a refusal may suggest ("official-q8_0").
	Lighter []string `json:"-"`
	// Dir is set for a measured directory.
	Dir string `json:"dir,omitempty"`
}

const (
	bppBF16 = 2.0
	bppQ8   = 34.0 / 32   // ggml q8_0: 32 int8 + one f16 scale
	bppQ4K  = 144.0 / 256 // ggml q4_K super-blocks
	bppF32  = 4.0
	bppF16  = 2.0
)

// ModelNames lists the built-in model profiles.
var ModelNames = []string{"official-bf16", "official-q8_0", "official-q4_k", "comfy-bf16", "tiny"}

// releaseDims are the release configs' dimensions, computed once.
var releaseDims = sync.OnceValues(func() (Dims, error) {
	a, err := arch.Release()
	if err != nil {
		return Dims{}, err
	}
	return DimsOf(a), nil
})

// LookupModel returns a named profile (the release's configs, or the
// embedded tiny model's, at the name's bytes per parameter), or measures a
// directory (MeasureDir).
func LookupModel(name string) (Model, error) {
	switch name {
	case "tiny", "":
		return Model{Name: "tiny", Dims: DimsOf(arch.Tiny()), DiTBPP: bppF32, QwenBPP: bppF32, VisionBPP: bppF32, VAEBPP: bppF32, AudioVAEBPP: bppF32}, nil
	case "official-bf16", "official-q8_0", "official-q4_k", "comfy-bf16":
		d, err := releaseDims()
		if err != nil {
			return Model{}, fmt.Errorf("plan: %w", err)
		}
		m := releaseProfiles[name]
		m.Name, m.Dims = name, d
		return m, nil
	}
	st, err := os.Stat(name)
	if err != nil || !st.IsDir() {
		return Model{}, fmt.Errorf("plan: model %q is neither a profile (%s) nor a directory", name, strings.Join(ModelNames, ", "))
	}
	return MeasureDir(name)
}

// releaseProfiles are the release's bytes per parameter as each named
// packing stores it.
var releaseProfiles = map[string]Model{
	"official-bf16": {DiTBPP: bppBF16, QwenBPP: bppBF16, VisionBPP: bppBF16, VAEBPP: bppF32, AudioVAEBPP: bppF32,
		Lighter: []string{"official-q8_0", "official-q4_k"}},
	"official-q8_0": {DiTBPP: bppQ8, QwenBPP: bppQ8, VisionBPP: bppBF16, VAEBPP: bppF32, AudioVAEBPP: bppF32,
		Lighter: []string{"official-q4_k"}},
	"official-q4_k": {DiTBPP: bppQ4K, QwenBPP: bppQ4K, VisionBPP: bppBF16, VAEBPP: bppF32, AudioVAEBPP: bppF32},
	"comfy-bf16": {DiTBPP: bppBF16, QwenBPP: bppBF16, VisionBPP: bppBF16, VAEBPP: bppF16, AudioVAEBPP: bppF32,
		Lighter: []string{"official-q8_0", "official-q4_k"}},
}

// component classifies a weight file by its path.
func component(rel string) string {
	p := strings.ToLower(filepath.ToSlash(rel))
	switch {
	case strings.Contains(p, "audio_vae") || strings.Contains(p, "vae") && strings.Contains(p, "audio"):
		return "audio_vae"
	case strings.Contains(p, "video_vae") || strings.Contains(p, "vae"):
		return "video_vae"
	case strings.Contains(p, "text_encoder") || strings.Contains(p, "qwen"):
		return "text_encoder"
	case strings.Contains(p, "transformer") || strings.Contains(p, "diffusion_model") || strings.Contains(p, "dit") || strings.Contains(p, "fl2va") || strings.Contains(p, "ref2va"):
		return "dit"
	}
	return ""
}

// MeasureDir builds a profile of the snapshot at dir (the official tree,
// a partition folder, the Comfy-Org repack or a GGUF set): its configs,
// read from the FL2VA partition's (or the folder's own) config files, the
// release's standing in for a component without one, and ModelFor's
// measured bytes per parameter.
func MeasureDir(dir string) (Model, error) {
	files := arch.Files{}
	for _, d := range []string{filepath.Join(dir, "FL2VA"), dir, filepath.Join(dir, "Ref2VA")} {
		if files = arch.OfficialFiles(d); files != (arch.Files{}) {
			break
		}
	}
	a, err := arch.ReadModel(files)
	if err != nil {
		return Model{}, fmt.Errorf("plan: measure %s: %w", dir, err)
	}
	return ModelFor(a, dir)
}

// ModelFor is the profile of a snapshot whose configs are a: the dims of a,
// and bytes per parameter from the *.safetensors / *.gguf file sizes under
// dir. Only the FL2VA partition's (or the unpartitioned) files are
// counted: both partitions are byte-identical in size.
func ModelFor(a *arch.Model, dir string) (Model, error) {
	bytes, err := fileBytes(dir)
	if err != nil {
		return Model{}, err
	}
	return ModelOfBytes(a, dir, bytes)
}

// fileBytes sums the weight files under dir per component (ModelOfBytes's
// keys), the FL2VA partition's unless only Ref2VA has one.
func fileBytes(dir string) (map[string]int64, error) {
	bytes := map[string]int64{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		ext := strings.ToLower(filepath.Ext(path))
		if ext != ".safetensors" && ext != ".gguf" {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		lrel := strings.ToLower(rel)
		if strings.Contains(lrel, "ref2va") && !strings.Contains(lrel, "fl2va") {
			// Keep the Ref2VA DiT only when there is nothing else.
			bytes["ref2va:"+component(rel)] += fileSize(d)
			return nil
		}
		if c := component(rel); c != "" {
			bytes[c] += fileSize(d)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("plan: measure %s: %w", dir, err)
	}
	for _, c := range []string{"dit", "text_encoder", "video_vae", "audio_vae"} {
		if bytes[c] == 0 {
			bytes[c] = bytes["ref2va:"+c]
		}
	}
	return bytes, nil
}

// ModelOfBytes is the profile of a snapshot whose configs are a and whose
// weights take bytes per component ("dit", "text_encoder", "video_vae",
// "audio_vae"; 0: the component's default width): what ModelFor measures
// from files, or what a generated snapshot declares.
func ModelOfBytes(a *arch.Model, dir string, bytes map[string]int64) (Model, error) {
	if bytes["dit"] == 0 {
		return Model{}, fmt.Errorf("plan: no DiT weights (*.safetensors or *.gguf under transformer/ or diffusion_models/) in %s", dir)
	}
	d := DimsOf(a)
	m := Model{Name: "dir", Dir: dir, Dims: d, VisionBPP: bppBF16, VAEBPP: bppF32, AudioVAEBPP: bppF32}
	m.DiTBPP = float64(bytes["dit"]) / float64(d.DiTParams())
	m.QwenBPP = bppBF16
	if te := bytes["text_encoder"]; te > 0 {
		// A full 64-layer checkpoint and Comfy's 50-layer cut differ in
		// size; take the reading whose width is a standard dtype.
		full := d.VisionParams() + 2*d.QEmbedParams() + int64(d.QLayers)*d.QLayerParams()
		cut := d.VisionParams() + d.QEmbedParams() + int64(d.QLayersUsed)*d.QLayerParams()
		m.QwenBPP = nearestWidth(float64(te) / float64(full))
		if c := float64(te) / float64(cut); widthError(c) < widthError(float64(te)/float64(full)) {
			m.QwenBPP = nearestWidth(c)
		}
		m.VisionBPP = math.Max(m.QwenBPP, bppBF16)
	}
	if v := bytes["video_vae"]; v > 0 {
		m.VAEBPP = nearestWidth(float64(v) / float64(d.VAEEncParams+d.VAEDecParams))
	}
	if a := bytes["audio_vae"]; a > 0 {
		m.AudioVAEBPP = nearestWidth(float64(a) / float64(d.AudioVAEParams))
	}
	return m, nil
}

func fileSize(d fs.DirEntry) int64 {
	info, err := d.Info()
	if err != nil {
		return 0
	}
	return info.Size()
}

var widths = []float64{bppF32, bppBF16, bppQ8, bppQ4K}

func widthError(v float64) float64 {
	best := math.Inf(1)
	for _, w := range widths {
		best = math.Min(best, math.Abs(v-w)/w)
	}
	return best
}

// nearestWidth snaps a measured ratio to a standard dtype width when it is
// within 10%; otherwise the measurement stands.
func nearestWidth(v float64) float64 {
	for _, w := range widths {
		if math.Abs(v-w)/w < 0.1 {
			return w
		}
	}
	return v
}

// Component byte sizes.

// DiTBlockBytes is one block's per-token weights.
func (m Model) DiTBlockBytes() int64 { return int64(float64(m.Dims.CoreBlockParams()) * m.DiTBPP) }

// DiTTrunkBytes is the non-block weights kept through the denoise.
func (m Model) DiTTrunkBytes() int64 { return int64(float64(m.Dims.TrunkParams()) * m.DiTBPP) }

// DiTAdaLNBlockBytes is one block's AdaLN projection, read once to bake tables.
func (m Model) DiTAdaLNBlockBytes() int64 {
	return int64(float64(m.Dims.AdaLNBlockParams()) * m.DiTBPP)
}

// DiTFileBytes is the whole transformer on disk.
func (m Model) DiTFileBytes() int64 { return int64(float64(m.Dims.DiTParams()) * m.DiTBPP) }

// QwenLayerBytes is one language layer.
func (m Model) QwenLayerBytes() int64 { return int64(float64(m.Dims.QLayerParams()) * m.QwenBPP) }

// QwenEmbedBytes is the token embedding table.
func (m Model) QwenEmbedBytes() int64 { return int64(float64(m.Dims.QEmbedParams()) * m.QwenBPP) }

// VisionBytes is the vision tower.
func (m Model) VisionBytes() int64 { return int64(float64(m.Dims.VisionParams()) * m.VisionBPP) }

// QwenUsedBytes is everything H3 reads of the text encoder (51.5 GB BF16).
func (m Model) QwenUsedBytes() int64 {
	return int64(m.Dims.QLayersUsed)*m.QwenLayerBytes() + m.QwenEmbedBytes() + m.VisionBytes()
}

// VAEEncoderBytes and VAEDecoderBytes split the video VAE.
func (m Model) VAEEncoderBytes() int64 { return int64(float64(m.Dims.VAEEncParams) * m.VAEBPP) }

// VAEDecoderBytes is the ViT3D decoder.
func (m Model) VAEDecoderBytes() int64 { return int64(float64(m.Dims.VAEDecParams) * m.VAEBPP) }

// AudioVAEBytes is the whole audio VAE (encoder and decoder).
func (m Model) AudioVAEBytes() int64 { return int64(float64(m.Dims.AudioVAEParams) * m.AudioVAEBPP) }
