package textenc

import (
	"context"
	"errors"
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
	defaultRowGroup   = 4096
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

// embed looks token rows up on the host, straight from the mapped table.
func (m *Model) embed(ids []int32) ([]float32, error) {
	info, _ := m.src.Lookup(embedName)
	data, ok := m.src.Data(embedName)
	D := m.cfg.Text.Hidden
	if !ok || len(info.Shape) != 2 || int(info.Shape[1]) != D {
		return nil, fmt.Errorf("textenc: %s has shape %v, want [vocab %d]", embedName, info.Shape, D)
	}
	vocab := int(info.Shape[0])
	es := int(weights.DType(info.DType).RowBytes(1))
	out := make([]float32, len(ids)*D)
	for s, id := range ids {
		if id < 0 || int(id) >= vocab {
			return nil, fmt.Errorf("textenc: token id %d at position %d is outside the vocabulary of %d", id, s, vocab)
		}
		row := data[int(id)*D*es : (int(id)+1)*D*es]
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
	if err := g.Compute(); err != nil {
		return fmt.Errorf("textenc: %s: %w", name, err)
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

// rowInputs declares and fills graph inputs for rows [s, e) of x
// (row-major, D wide) and their mRoPE positions.
func rowInputs(g *ggml.Graph, x []float32, pos positions, D, s, e int) (xin, pin *ggml.Tensor) {
	xin = g.Input("x", ggml.F32, D, e-s)
	xin.SetF32(x[s*D : e*D])
	pin = g.Input("pos", ggml.I32, 4*(e-s))
	pin.SetI32(pos.rows(s, e))
	return xin, pin
}

// runText runs the language layers over x (row-major [S, hidden]) in place.
// After layer i < len(deepstack), deepstack[i] (one row per visual row, in
// order) is added at the visual rows.
func (m *Model) runText(ctx context.Context, x []float32, pos positions, visual []int, deepstack [][]float32) error {
	D := m.cfg.Text.Hidden
	type loaded struct {
		s   *layerSlot
		err error
	}
	var next chan loaded
	defer func() { // a prefetch still in flight when we stop
		if next != nil {
			if r := <-next; r.s != nil {
				r.s.ws.Free()
			}
		}
	}()
	for li := 0; li < m.opts.Layers; li++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 := time.Now()
		var s *layerSlot
		var err error
		if next != nil {
			r := <-next
			next = nil
			s, err = r.s, r.err
			if err == nil {
				m.layers[li] = s
			}
		} else {
			s, err = m.layer(li)
		}
		if err != nil {
			return err
		}
		if m.streamed() && li+1 < m.opts.Layers && m.layers[li+1] == nil {
			next = make(chan loaded, 1)
			go func(i int) {
				s, err := m.loadLayer(i)
				next <- loaded{s, err}
			}(li + 1)
		}
		k, v, err := m.keysValues(li, &s.l, x, pos)
		if err != nil {
			return err
		}
		if err := m.queries(li, &s.l, x, pos, k, v); err != nil {
			return err
		}
		m.release(li)
		m.tap(fmt.Sprintf("layer%d_out", li), x)
		if li < len(deepstack) {
			if len(deepstack[li]) != len(visual)*D {
				return errors.New("textenc: deepstack feature rows differ from the visual rows")
			}
			for j, r := range visual {
				row := x[r*D : (r+1)*D]
				for i, d := range deepstack[li][j*D : (j+1)*D] {
					row[i] += d
				}
			}
		}
		m.opts.Logger.Debug("textenc layer", "layer", li, "rows", len(x)/D, "ms", time.Since(t0).Milliseconds())
	}
	return nil
}

// keysValues computes every row's rotated keys and values for layer li,
// RowGroup rows per graph, and returns them as host bytes of KVType in
// ggml order [hd, KVHeads, S] (a prefix of rows is a prefix of bytes).
func (m *Model) keysValues(li int, l *TextLayer, x []float32, pos positions) (k, v []byte, err error) {
	c := m.cfg.Text
	D, S, G := c.Hidden, len(x)/c.Hidden, m.opts.RowGroup
	rowBytes := c.KVHeads * c.HeadDim * m.kvType.RowBytes(1)
	k, v = make([]byte, S*rowBytes), make([]byte, S*rowBytes)
	for s := 0; s < S; s += G {
		e := min(S, s+G)
		g := m.b.NewGraph(0)
		xin, pin := rowInputs(g, x, pos, D, s, e)
		kt, vt := l.KeysValues(g, xin, pin, c)
		if m.kvType != ggml.F32 {
			kt, vt = g.Cast(kt, m.kvType), g.Cast(vt, m.kvType)
		}
		g.Output(kt, vt)
		if err := m.compute(fmt.Sprintf("layer %d keys/values rows %d-%d", li, s, e), g); err != nil {
			g.Free()
			return nil, nil, err
		}
		copy(k[s*rowBytes:], kt.Raw())
		copy(v[s*rowBytes:], vt.Raw())
		g.Free()
	}
	return k, v, nil
}

// queries runs layer li's attention and MLP for every row group, each group
// attending to the keys of all rows up to its last, and writes the layer
// output over x.
func (m *Model) queries(li int, l *TextLayer, x []float32, pos positions, k, v []byte) error {
	c := m.cfg.Text
	D, S, G := c.Hidden, len(x)/c.Hidden, m.opts.RowGroup
	rowBytes := c.KVHeads * c.HeadDim * m.kvType.RowBytes(1)
	out := make([]float32, len(x))
	for s := 0; s < S; s += G {
		e := min(S, s+G)
		g := m.b.NewGraph(0)
		xin, pin := rowInputs(g, x, pos, D, s, e)
		kin := g.Input("k", m.kvType, c.HeadDim, c.KVHeads, e)
		kin.SetRaw(k[:e*rowBytes])
		vin := g.Input("v", m.kvType, c.HeadDim, c.KVHeads, e)
		vin.SetRaw(v[:e*rowBytes])
		y := l.Forward(g, xin, pin, kin, vin, c, m.opts.QueryChunk, m.opts.Precision.KV, fmt.Sprintf("blk.%d", li))
		g.Output(y)
		if err := m.compute(fmt.Sprintf("layer %d rows %d-%d", li, s, e), g); err != nil {
			g.Free()
			return err
		}
		copy(out[s*D:], y.F32())
		g.Free()
	}
	copy(x, out)
	return nil
}
