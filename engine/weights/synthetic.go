package weights

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/weights/safetensors"
)

// SyntheticName is the manifest that stands for a component's weights in
// a synthetic snapshot: every tensor's name, stored dtype, shape and
// distribution, and no values (fixed tables excepted).
const SyntheticName = "synthetic.json"

// SyntheticConfig is the architecture a synthetic snapshot declares.
type SyntheticConfig int

const (
	// SyntheticRelease is the release's four configs (arch.Release), at
	// its dtypes: BF16 DiT (F32 islands) and Qwen, F32 VAEs.
	SyntheticRelease SyntheticConfig = iota
	// SyntheticTiny is the tiny model's (WriteTiny's configs), for tests.
	SyntheticTiny
)

// SyntheticOptions configures WriteSynthetic.
type SyntheticOptions struct {
	Config SyntheticConfig
	// Seed picks every tensor's values and the audio VAE's latent
	// statistics, which the release's files lack.
	Seed uint64
}

// WriteSynthetic writes a snapshot in the release's layout (one FL2VA
// partition: T2VA and FL2VA) whose components are manifests
// (SyntheticName) instead of shards: Open reads them as Sources whose
// tensors LoadModule generates where they live (ggml's FillSeeded), so a
// render of the release's size runs through the engine's own loaders and
// Generate with no checkpoint, no host copy of the weights and a few
// hundred kilobytes on disk. The tokenizer is the tiny model's (the
// release's tokenizer.json is not in the project), and the Qwen config
// carries its special ids: prompts count differently, no size changes.
// dir must not exist or be empty.
func WriteSynthetic(dir string, o SyntheticOptions) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("weights: %s is not empty; choose a new folder for the synthetic snapshot", dir)
	}
	pw := partitionWriter{seed: o.Seed, ditSeed: o.Seed + 1000, tensors: writeManifest}
	switch o.Config {
	case SyntheticTiny:
		pw.dit, pw.qwen, pw.video, pw.audio = arch.TinyDiT(), tinyQwen(), arch.TinyVideoVAE(), tinyAudioVAE(o.Seed)
	case SyntheticRelease:
		rel, err := arch.Release()
		if err != nil {
			return err
		}
		pw.dit, pw.qwen, pw.video, pw.audio = rel.DiT, withTinySpecials(rel.Qwen), rel.VideoVAE, withSeededStats(rel.AudioVAE, o.Seed)
	default:
		return fmt.Errorf("weights: synthetic config %d", o.Config)
	}
	if err := writeJSON(filepath.Join(dir, "model_index.json"), map[string]any{
		"_class_name": "MiniMaxH3ModularPipeline", "_h3studio_synthetic": map[string]any{"seed": o.Seed},
	}); err != nil {
		return err
	}
	return pw.write(filepath.Join(dir, "FL2VA"), "fl2va")
}

// manifest is SyntheticName's content.
type manifest struct {
	Seed    uint64           `json:"seed"`
	Tensors []manifestTensor `json:"tensors"`
}

type manifestTensor struct {
	Name  string  `json:"name"`
	DType DType   `json:"dtype"`
	Shape []int64 `json:"shape"`
	// Mean and Std are FillSeeded's distribution; Values, when set, are
	// the tensor itself (rope frequencies, anti-aliasing filters).
	Mean   float32   `json:"mean,omitempty"`
	Std    float32   `json:"std,omitempty"`
	Values []float32 `json:"values,omitempty"`
}

// writeManifest is the manifest of specs: the same distributions WriteTiny
// draws from (N(0, 1/fan_in) matrices, 1 ± 0.1 gains, 0.02 biases) as
// FillSeeded's uniform of the same mean and deviation.
func writeManifest(dir string, specs specList, seed uint64, _ int) error {
	m := manifest{Seed: seed}
	for _, sp := range specs {
		t := manifestTensor{Name: sp.name, DType: sp.dtype, Shape: sp.shape}
		switch sp.init {
		case initFixed:
			t.Values = sp.fixed
		case initWeight:
			fanIn := int64(1)
			for _, d := range sp.shape[1:] {
				fanIn *= d
			}
			t.Std = float32(1 / math.Sqrt(float64(fanIn)))
		case initNorm:
			t.Mean, t.Std = 1, 0.1
		default:
			t.Std = 0.02
		}
		m.Tensors = append(m.Tensors, t)
	}
	return writeJSON(filepath.Join(dir, SyntheticName), m)
}

// Seeded is a Source whose tensors are generated, not stored
// (WriteSynthetic's). LoadModule fills them on the device with
// ggml.WeightSet.FillSeeded; Data computes the same values on the host, one
// tensor at a time, for what a loader reads there (host transforms, the
// block streamer, fixed tables).
type Seeded interface {
	Source
	// Seed is FillSeeded's seed for every tensor of the source.
	Seed() uint64
	// Init is how the tensor is drawn; false for a tensor whose values
	// are stored (Data has them).
	Init(name string) (ggml.Init, bool)
}

// synthSource is a manifest opened as a Seeded Source.
type synthSource struct {
	path   string
	m      manifest
	infos  []TensorInfo
	index  map[string]int
	spec   map[string]*manifestTensor
	size   int64
	pool   []float32
	poolMu sync.Mutex
}

// OpenSynthetic reads a manifest written by WriteSynthetic.
func OpenSynthetic(path string) (Source, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("weights: %w", err)
	}
	s := &synthSource{path: path, index: map[string]int{}, spec: map[string]*manifestTensor{}}
	if err := json.Unmarshal(raw, &s.m); err != nil {
		return nil, fmt.Errorf("weights: %s is not a synthetic manifest: %w", path, err)
	}
	for i := range s.m.Tensors {
		t := &s.m.Tensors[i]
		info := TensorInfo{Name: t.Name, DType: t.DType, Shape: t.Shape, File: path, Offset: s.size}
		info.Bytes = t.DType.RowBytes(info.Elements())
		if info.Bytes < 0 || (t.Values != nil && int64(len(t.Values)) != info.Elements()) {
			return nil, fmt.Errorf("weights: %s: tensor %s is %s %v, which the manifest cannot hold", path, t.Name, t.DType, t.Shape)
		}
		s.size += info.Bytes
		s.infos = append(s.infos, info)
		s.spec[t.Name] = t
	}
	sort.Slice(s.infos, func(i, j int) bool { return s.infos[i].Name < s.infos[j].Name })
	for i, t := range s.infos {
		s.index[t.Name] = i
	}
	return s, nil
}

func (s *synthSource) Tensors() []TensorInfo { return s.infos }

func (s *synthSource) Lookup(name string) (TensorInfo, bool) {
	i, ok := s.index[name]
	if !ok {
		return TensorInfo{}, false
	}
	return s.infos[i], true
}

func (s *synthSource) Seed() uint64 { return s.m.Seed }

func (s *synthSource) Init(name string) (ggml.Init, bool) {
	t, ok := s.spec[name]
	if !ok || t.Values != nil {
		return ggml.Init{}, false
	}
	return ggml.Init{Mean: t.Mean, Std: t.Std}, true
}

// Data is the tensor's bytes in its stored dtype: the values FillSeeded
// writes into a tensor of the checkpoint's ggml shape (GGMLShape), drawn
// from the seed's pool window by window.
func (s *synthSource) Data(name string) ([]byte, bool) {
	info, ok := s.Lookup(name)
	if !ok {
		return nil, false
	}
	t := s.spec[name]
	if t.Values != nil {
		return encodeF32(t.DType, t.Values)
	}
	n := GGMLShape(info.Shape)[0]
	wins, err := ggml.SeedWindows(s.m.Seed, name, n, int(info.Elements())/n)
	if err != nil {
		return nil, false
	}
	pool := s.seedPool()
	v := make([]float32, 0, info.Elements())
	for _, w := range wins {
		v = append(v, drawn(pool[w.Offset:w.Offset+w.Rows*n], t)...)
	}
	return encodeF32(t.DType, v)
}

// Row is row i of a 2-D tensor, computed alone: the embedding table's
// rows are read one token at a time, and the release's (1.6 GB) is never
// generated whole on the host.
func (s *synthSource) Row(name string, i int) ([]byte, bool) {
	info, ok := s.Lookup(name)
	t := s.spec[name]
	if !ok || len(info.Shape) != 2 || i < 0 || int64(i) >= info.Shape[0] {
		return nil, false
	}
	n := int(info.Shape[1])
	if t.Values != nil {
		return encodeF32(t.DType, t.Values[i*n:(i+1)*n])
	}
	wins, err := ggml.SeedWindows(s.m.Seed, name, n, int(info.Shape[0]))
	if err != nil {
		return nil, false
	}
	for _, w := range wins {
		if i >= w.Row && i < w.Row+w.Rows {
			off := w.Offset + (i-w.Row)*n
			return encodeF32(t.DType, drawn(s.seedPool()[off:off+n], t))
		}
	}
	return nil, false
}

// drawn scales pool values to t's distribution, rounding to float32 before
// the mean is added as ggml's scale and add nodes do (no fused
// multiply-add).
func drawn(pool []float32, t *manifestTensor) []float32 {
	out := make([]float32, len(pool))
	for i, u := range pool {
		x := float32(u * t.Std)
		if t.Mean != 0 {
			x += t.Mean
		}
		out[i] = x
	}
	return out
}

func (s *synthSource) seedPool() []float32 {
	s.poolMu.Lock()
	defer s.poolMu.Unlock()
	if s.pool == nil {
		s.pool = ggml.SeedPool(s.m.Seed)
	}
	return s.pool
}

// encodeF32 stores v as dt (the manifests' types: F32, BF16, F16).
func encodeF32(dt DType, v []float32) ([]byte, bool) {
	switch dt {
	case F32, BF16, F16:
	default:
		return nil, false
	}
	out, err := safetensors.FromFloat32(safetensors.DType(dt), v)
	return out, err == nil
}

// Mapping is nil: nothing is mapped, so LoadModule never places a
// synthetic tensor zero-copy.
func (s *synthSource) Mapping(string) []byte { return nil }

// Files is the manifest with the size the tensors would take stored.
func (s *synthSource) Files() []FileInfo { return []FileInfo{{Path: s.path, Size: s.size}} }

func (s *synthSource) Metadata() map[string]string { return nil }

func (s *synthSource) Close() error { return nil }
