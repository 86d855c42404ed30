package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"h3studio/engine/arch"
	"h3studio/engine/dit"
	"h3studio/engine/ggml"
	"h3studio/engine/plan"
	"h3studio/engine/sampler"
	"h3studio/engine/tokenizer"
	"h3studio/engine/weights"
)

// ErrOutOfMemory is ggml.ErrOutOfMemory: Generate's error wraps it when the
// backend could not allocate weights or a graph's buffers, so app can turn
// it into advice without importing the binding.
var ErrOutOfMemory = ggml.ErrOutOfMemory

// Options configures Open. The zero value runs on the GPU when there is one,
// with one CPU thread per logical CPU, and logs to slog.Default().
type Options struct {
	// Threads bounds the CPU threads ggml uses (0: every logical CPU).
	Threads int
	// Device picks the ggml device (zero: the GPU when present).
	Device ggml.Device
	Logger *slog.Logger
	// CacheEntries bounds the prepared text conditionings and reference
	// latents kept across generations of one Engine (0: 16; negative: no
	// cache).
	CacheEntries int
	// Exact runs every model in float32: weights widened from their stored
	// type and attention K/V kept in f32 (about twice the memory and time;
	// for comparing with a float32 reference, as the parity tests do).
	Exact bool
}

// Engine is an opened snapshot: its partitions, the planner's profile of
// its weights and the compute backend. Weights are not loaded here; each
// phase of Generate loads what it needs and releases it before the next.
// An Engine runs one generation at a time.
type Engine struct {
	snap *weights.Snapshot
	// models are each partition's configs, parsed once at Open and read
	// (never changed) by the planner and every phase's loader.
	models  map[string]*arch.Model
	profile plan.Model
	backend *ggml.Backend
	log     *slog.Logger
	cache   *cache
	exact   bool
	// noise draws n standard normals from a seed as torch's CPU generator
	// does (sampler.TorchNormal), the official pipeline's noise.
	noise func(seed uint64, n int) []float32
	// tap, when set (tests only), sees the named intermediates of a
	// generation: Qwen ids, tags, positions and hidden state, condition
	// rows, each step's latents, the final latents and the decoded floats.
	tap func(name string, index int, v any)

	mu sync.Mutex // one Generate at a time: phases share the backend

	// tok is the snapshot's tokenizer, parsed on first use (the release's
	// takes over half a second) and shared by Plan and Generate; Encode
	// is safe for concurrent use.
	tokOnce sync.Once
	tok     *tokenizer.Tokenizer
	tokErr  error

	// gpu is whether graphs run on a GPU; memMu keeps DeviceBytesInUse,
	// which runs beside Generate, off a backend that Close frees.
	gpu   bool
	memMu sync.Mutex

	// previewKeys memoises PreviewKey per partition: it reads the whole
	// video VAE.
	keyMu       sync.Mutex
	previewKeys map[string]string
}

// Open discovers the snapshot at dir and starts the compute backend. dir is
// an official tree (or one partition folder), a Comfy-Org single file tree
// or a GGUF set; TinyModelDir provides the embedded tiny model.
func Open(dir string, o Options) (*Engine, error) {
	snap, err := weights.Discover(dir)
	if err != nil {
		return nil, err
	}
	models, err := readModels(snap)
	if err != nil {
		return nil, err
	}
	profile, err := profileFor(snap, models)
	if err != nil {
		return nil, err
	}
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: o.Device, Threads: o.Threads})
	if err != nil {
		return nil, fmt.Errorf("engine: start backend: %w", err)
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	n := o.CacheEntries
	if n == 0 {
		n = 16
	}
	return &Engine{snap: snap, models: models, profile: profile, backend: b, log: log, cache: newCache(n), noise: sampler.TorchNormal, exact: o.Exact, gpu: b.Caps().GPU}, nil
}

// precision is every model's precision in the engine's mode: Exact
// (reference) runs f32 weights and K/V, the rest the models' defaults.
func (e *Engine) precision() ggml.Precision {
	if e.exact {
		return ggml.Exact()
	}
	return ggml.Precision{}
}

// Close stops the backend. Generate must not be running.
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.memMu.Lock()
	defer e.memMu.Unlock()
	if e.backend != nil {
		e.backend.Close()
		e.backend = nil
	}
}

// Snapshot is the opened model tree.
func (e *Engine) Snapshot() *weights.Snapshot { return e.snap }

// Profile is the planner's description of the snapshot's weights.
func (e *Engine) Profile() plan.Model { return e.profile }

// Backend describes the compute device.
func (e *Engine) Backend() ggml.Caps { return e.backend.Caps() }

// Plan counts and fits a request for machine mc with this snapshot: the
// prompt counted with the snapshot's tokenizer, the snapshot's processor
// budget and weights profile, and a check that the task's partition has
// everything Generate will load. A model-rule violation or a snapshot that
// cannot run the task is an error; a request that cannot be fitted is a
// plan whose Verdict is plan.Refused. The plan keeps the request for
// Generate.
func (e *Engine) Plan(r plan.Request, mc plan.Machine, opt plan.Options) (*plan.Plan, error) {
	if err := checkKnobs(r); err != nil {
		return nil, err
	}
	part := taskPartition(r)
	if err := e.checkPartition(part); err != nil {
		return nil, err
	}
	if err := e.planLoRAs(&r, part); err != nil {
		return nil, err
	}
	proc, err := qwenProcessor(e.partition(part))
	if err != nil {
		return nil, err
	}
	r.Processor = proc
	if d := e.snap.Declared; d != nil {
		r.RefShortEdge = d.ReferenceShortEdge
	}
	tok, err := e.tokenizer()
	if err != nil {
		return nil, err
	}
	r.PromptTokens, r.PromptEstimated = len(tok.Encode(r.Prompt)), false
	p, err := plan.Make(r, mc, e.profile, opt)
	if err != nil || p.Layout == nil || len(p.Layout.Refs) != len(r.Refs) {
		return p, err
	}
	// References an earlier generation prepared cost no time: plan again
	// with them marked, which changes only the estimate.
	cached, hit := make([]bool, len(r.Refs)), false
	for i := range r.Refs {
		cached[i] = e.cache.has(refKey(r.Refs[i], &p.Layout.Refs[i]))
		hit = hit || cached[i]
	}
	if !hit {
		return p, nil
	}
	r.Cached.Refs = cached
	return plan.Make(r, mc, e.profile, opt)
}

// tokenizer is the snapshot's tokenizer, loaded on first use.
func (e *Engine) tokenizer() (*tokenizer.Tokenizer, error) {
	e.tokOnce.Do(func() {
		path := e.snap.Tokenizer()
		if path == "" {
			e.tokErr = fmt.Errorf("engine: the snapshot at %s has no tokenizer.json", e.snap.Root)
			return
		}
		e.tok, e.tokErr = tokenizer.Load(path)
	})
	return e.tok, e.tokErr
}

func (e *Engine) partition(name string) *weights.Partition {
	for _, p := range e.snap.Partitions {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// readModels parses every partition's configs once. A component without a
// config.json (single-file trees) takes the release's, except the DiT,
// whose config the file itself states (repack metadata) or its tensor
// shapes give (GGUF).
func readModels(s *weights.Snapshot) (map[string]*arch.Model, error) {
	models := map[string]*arch.Model{}
	for _, p := range s.Partitions {
		files := arch.Files{DiT: configOf(p, weights.Transformer), Qwen: configOf(p, weights.TextEncoder),
			VideoVAE: configOf(p, weights.VideoVAE), AudioVAE: configOf(p, weights.AudioVAE)}
		m, err := arch.ReadModel(files)
		if err != nil {
			return nil, fmt.Errorf("engine: %s partition: %w", p.Name, err)
		}
		if tr := p.Component(weights.Transformer); files.DiT == "" && tr != nil {
			if m.DiT, err = fileDiT(tr); err != nil {
				return nil, fmt.Errorf("engine: %s partition: %w", p.Name, err)
			}
			m.Assumed = slices.DeleteFunc(m.Assumed, func(c string) bool { return c == weights.Transformer })
		}
		models[p.Name] = m
	}
	return models, nil
}

func configOf(p *weights.Partition, component string) string {
	if c := p.Component(component); c != nil {
		return c.Config
	}
	return ""
}

// fileDiT reads a single-file transformer's config from its header.
func fileDiT(c *weights.Component) (*arch.DiT, error) {
	src, err := c.Open()
	if err != nil {
		return nil, err
	}
	defer src.Close()
	return dit.ConfigFor(src, nil)
}

// profileFor is the planner profile of the snapshot: its own configs (the
// FL2VA partition's, the two partitions' architectures being the same)
// with bytes per parameter measured from its files.
func profileFor(s *weights.Snapshot, models map[string]*arch.Model) (plan.Model, error) {
	for _, p := range s.Partitions {
		if p.Name != "fl2va" && p.Name != "ref2va" {
			continue
		}
		m := models[p.Name]
		bytes, synthetic, err := syntheticBytes(p)
		if err != nil || !synthetic {
			if err == nil {
				return plan.ModelFor(m, s.Root)
			}
			return plan.Model{}, err
		}
		return plan.ModelOfBytes(m, s.Root, bytes)
	}
	return plan.Model{}, fmt.Errorf("engine: the snapshot at %s has no partition to plan", s.Root)
}

// syntheticBytes is what a generated partition's weights take stored, per
// planner component (false: the partition's weights are files, which
// plan.ModelFor measures).
func syntheticBytes(p *weights.Partition) (map[string]int64, bool, error) {
	keys := map[string]string{weights.Transformer: "dit", weights.TextEncoder: "text_encoder",
		weights.VideoVAE: "video_vae", weights.AudioVAE: "audio_vae"}
	bytes := map[string]int64{}
	for _, c := range p.Components {
		if !c.Synthetic() {
			return nil, false, nil
		}
		src, err := c.Open()
		if err != nil {
			return nil, false, err
		}
		for _, t := range src.Tensors() {
			bytes[keys[c.Name]] += t.Bytes
		}
		src.Close()
	}
	return bytes, true, nil
}

// model is the configs of the run's partition.
func (g *generation) model() *arch.Model { return g.e.models[g.part.Name] }

// TinySeed is the seed of the embedded tiny model.
const TinySeed = 1

// TinyModelDir returns the embedded tiny model's snapshot under cacheRoot,
// writing it on first use. The model is generated (engine/weights.WriteTiny,
// deterministic for TinySeed) rather than stored in the binary: 17 MB of
// random weights would triple the binary and the repository for bytes any
// build can reproduce in a second. A folder that is present but incomplete
// (an interrupted first run) is replaced.
func TinyModelDir(cacheRoot string) (string, error) {
	dir := filepath.Join(cacheRoot, fmt.Sprintf("tiny-seed%d-v%d", TinySeed, weights.TinyVersion))
	if _, err := weights.Discover(dir); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(cacheRoot, 0o755); err != nil {
		return "", fmt.Errorf("engine: tiny model: %w", err)
	}
	// WriteTiny builds a temporary sibling and renames it into place, so a
	// complete folder is the only thing that ever appears at dir; a stale
	// partial one from an older layout is removed first.
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("engine: tiny model: %w", err)
	}
	if err := weights.WriteTiny(dir, weights.TinyOptions{Seed: TinySeed, Aligned16: true}); err != nil {
		if _, derr := weights.Discover(dir); derr == nil {
			return dir, nil // another process wrote it first
		}
		return "", errors.Join(errors.New("engine: write the tiny model"), err)
	}
	return dir, nil
}
