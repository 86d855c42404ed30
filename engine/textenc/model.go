package textenc

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"h3studio/engine/ggml"
	"h3studio/engine/plan"
	"h3studio/engine/tap"
	"h3studio/engine/weights"
	"h3studio/engine/weights/safetensors"
)

// Options configures a Model. The zero value runs the release's 50 layers
// (or all of a smaller checkpoint) with weights as stored, resident.
type Options struct {
	// Layers is how many language layers run; 0 means
	// min(ReleaseLayers, the checkpoint's count).
	Layers int
	// Precision.Weights stores matrices as F32, F16, BF16 or Q8_0 (zero:
	// as the checkpoint stores them); Precision.KV is the attention K/V
	// type (zero: the backend's).
	Precision ggml.Precision
	// QueryChunk is the query rows per flash-attention call; 0 means 512.
	QueryChunk int
	// RowGroup is the token rows one graph processes; 0 means 4096. It
	// bounds activation memory: a layer runs as ceil(S/RowGroup) graphs.
	RowGroup int
	// Residency is the plan's: plan.Streamed holds at most two layers
	// (the running one, and the next, loaded in the background); anything
	// else loads every layer at first use and keeps it until Close.
	Residency plan.Residency
	Logger    *slog.Logger
	// Tap, when set, receives named intermediates as [rows, hidden]
	// (names as in the parity fixtures: inputs_embeds, vision_embeds,
	// deepstack.K, layerN_out before deepstack, hidden).
	Tap tap.Func
}

const (
	defaultQueryChunk = 512
	defaultRowGroup   = plan.QwenRowGroup
)

// Model is a loaded text/reference encoder. It is not safe for concurrent
// use; Close frees every device buffer it holds.
type Model struct {
	cfg  Config
	opts Options
	// kvType is the attention K/V type, also how K/V rows are kept
	// between a layer's passes, so Attention converts nothing.
	kvType ggml.DType
	b      *ggml.Backend
	src    weights.Source
	layers []*layerSlot
	vision *visionSlot
	// graphHook sees every graph before it is computed (tests audit them).
	graphHook func(name string, g *ggml.Graph)
}

type layerSlot struct {
	l  TextLayer
	ws *weights.Module
}

// New prepares an encoder over src (the text encoder's tensors under HF
// names). Weights load lazily, per Options.Residency.
func New(b *ggml.Backend, src weights.Source, cfg Config, o Options) (*Model, error) {
	if _, ok := src.Lookup(embedName); !ok {
		return nil, fmt.Errorf("textenc: tensor %s missing: not a Qwen3-VL text encoder checkpoint", embedName)
	}
	m, err := newModel(b, cfg, o)
	if err != nil {
		return nil, err
	}
	m.src = src
	return m, nil
}

// newModel checks cfg and o and fills o's defaults; the layers are not
// loaded (New's source or a PrefillBench's seeded sets provide them).
func newModel(b *ggml.Backend, cfg Config, o Options) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if o.Layers == 0 {
		o.Layers = min(ReleaseLayers, cfg.Text.Layers)
	}
	if o.Layers < 1 || o.Layers > cfg.Text.Layers {
		return nil, fmt.Errorf("textenc: %d layers requested, the checkpoint has %d", o.Layers, cfg.Text.Layers)
	}
	if err := o.Precision.Check("textenc", ggml.F32, ggml.F16, ggml.BF16, ggml.Q8_0); err != nil {
		return nil, err
	}
	if o.QueryChunk <= 0 {
		o.QueryChunk = defaultQueryChunk
	}
	if o.RowGroup <= 0 {
		o.RowGroup = defaultRowGroup
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return &Model{cfg: cfg, opts: o, kvType: o.Precision.KV.Or(b.KVType()), b: b, layers: make([]*layerSlot, o.Layers)}, nil
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Close frees all device memory held by the model (the source stays open).
func (m *Model) Close() {
	for i, s := range m.layers {
		if s != nil {
			s.ws.Free()
			m.layers[i] = nil
		}
	}
	m.freeVision()
}

const embedName = "model.language_model.embed_tokens.weight"

// embed looks token rows up on the host, straight from the mapped table
// (one row at a time: a generated table is never made whole).
func (m *Model) embed(ids []int32) ([]float32, error) {
	info, _ := m.src.Lookup(embedName)
	D := m.cfg.Text.Hidden
	if len(info.Shape) != 2 || int(info.Shape[1]) != D {
		return nil, fmt.Errorf("textenc: %s has shape %v, want [vocab %d]", embedName, info.Shape, D)
	}
	vocab := int(info.Shape[0])
	out := make([]float32, len(ids)*D)
	for s, id := range ids {
		if id < 0 || int(id) >= vocab {
			return nil, fmt.Errorf("textenc: token id %d at position %d is outside the vocabulary of %d", id, s, vocab)
		}
		row, ok := weights.Row(m.src, embedName, int(id))
		if !ok {
			return nil, fmt.Errorf("textenc: %s: no data for row %d", embedName, id)
		}
		v, err := safetensors.ToFloat32(safetensors.DType(info.DType), row)
		if err != nil {
			return nil, fmt.Errorf("textenc: %s: %w", embedName, err)
		}
		copy(out[s*D:], v)
	}
	return out, nil
}

func (m *Model) layer(i int) (*layerSlot, error) {
	if s := m.layers[i]; s != nil {
		return s, nil
	}
	s, err := m.loadLayer(i)
	if err != nil {
		return nil, err
	}
	m.layers[i] = s
	return s, nil
}

// loadLayer reads layer i into a new weight set. It touches no Model
// state, so a prefetch goroutine may run it while another layer computes.
func (m *Model) loadLayer(i int) (*layerSlot, error) {
	s := &layerSlot{}
	ws, err := m.load(fmt.Sprintf("model.language_model.layers.%d.", i), &s.l, textDims(m.cfg.Text))
	if err != nil {
		return nil, err
	}
	s.ws = ws
	return s, nil
}

// streamed reports whether layers stream (Options.Residency).
func (m *Model) streamed() bool { return m.opts.Residency == plan.Streamed }

func (m *Model) release(i int) {
	if m.streamed() && m.layers[i] != nil {
		m.layers[i].ws.Free()
		m.layers[i] = nil
	}
}

func (m *Model) compute(name string, g *ggml.Graph) error {
	if m.graphHook != nil {
		m.graphHook(name, g)
	}
	t0 := time.Now()
	if err := g.Compute(); err != nil {
		return fmt.Errorf("textenc: %s: %w", name, err)
	}
	// Per-graph wall time (inputs uploaded, computed, synchronised): the
	// bench's --trace shows where a prefill's time goes, graph by graph.
	// Checked first: the attributes (the backend's lock for Splits) would
	// be paid on every graph of every prefill otherwise.
	if m.opts.Logger.Enabled(context.Background(), slog.LevelDebug) {
		m.opts.Logger.Debug("textenc graph", "graph", name, "ms", float64(time.Since(t0).Microseconds())/1e3, "splits", m.b.Splits())
	}
	return nil
}

func (m *Model) tap(name string, data []float32) {
	D := m.cfg.Text.Hidden
	m.opts.Tap.Host(name, data, len(data)/D, D)
}

// positions is the per-token mRoPE (t, h, w).
type positions [3][]int32

// rows packs rows [s, e) as ggml's multi-axis RoPE wants them: all t, then
// all h, all w, and a zero fourth axis.
func (p positions) rows(s, e int) []int32 {
	n := e - s
	out := make([]int32, 4*n)
	for a := 0; a < 3; a++ {
		copy(out[a*n:(a+1)*n], p[a][s:e])
	}
	return out
}
