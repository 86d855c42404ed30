package dit

import (
	"errors"
	"fmt"
	"strings"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// Residency says where the blocks' core weights live during a forward.
type Residency int

const (
	// Resident uploads every block once; one graph runs all blocks.
	Resident Residency = iota
	// Streamed uploads one block at a time from the (mapped) checkpoint
	// before it runs and frees it after: the block-by-block path for Macs
	// whose memory cannot hold the 38 GB core.
	Streamed
)

// Options configures Load.
type Options struct {
	// QKV is the fused qkv row order of the checkpoint, as engine/weights
	// recorded it from the snapshot's provenance. Required.
	QKV       weights.QKVLayout
	Residency Residency
	// WeightType, when BF16, F16, Q8_0 or Q4_K, converts the weight
	// matrices at load time, except the F32 islands of the release (patch
	// projections, time embedder, output heads). The zero value (F32's
	// value) keeps every tensor as stored.
	WeightType ggml.DType
	// ExactKV keeps attention K/V in f32 (parity runs); otherwise
	// engine/ggml picks the backend's K/V type (bf16 on the CPU, f16 on Metal).
	ExactKV bool
	// AdaLNType is the storage of the precomputed block modulation tables:
	// the zero value (F32's) keeps them exact; BF16 halves them (about
	// 0.4 GB per 20 steps of the release instead of 0.8).
	AdaLNType ggml.DType
}

// TapFunc receives a named intermediate (row-major [rows, width]).
type TapFunc func(name string, shape []int, data []float32)

// Model is a loaded DiT.
type Model struct {
	Cfg *Config
	b   *ggml.Backend
	src weights.Source
	opt Options

	top     Top
	topWS   *ggml.WeightSet
	text    TextPath
	refiner []Core
	textWS  *ggml.WeightSet
	blocks  []Core // bound when resident
	coreWS  *ggml.WeightSet
	invFreq []float32

	ada    *adaTables // nil until PrepareAdaLN
	active []bool
	reuse  coreReuse

	// Tap, when set, receives the intermediates named in the package doc.
	Tap TapFunc
	// Inspect, when set, sees every graph just before it runs (the Metal
	// op audit in tests and on the Mac; stage names the graph).
	Inspect func(stage string, g *ggml.Graph)
}

// compute runs a finished graph after showing it to Inspect.
func (m *Model) compute(stage string, g *ggml.Graph) error {
	if m.Inspect != nil {
		m.Inspect(stage, g)
	}
	if err := g.Compute(); err != nil {
		return fmt.Errorf("dit: %s: %w", stage, err)
	}
	return nil
}

// Load validates the checkpoint against cfg and uploads the weights the
// options ask to be resident. src must stay open while the model is used
// (streamed blocks and the AdaLN precompute read from it).
func Load(b *ggml.Backend, src weights.Source, cfg *Config, o Options) (*Model, error) {
	if o.QKV != weights.QKVInterleaved && o.QKV != weights.QKVFlat {
		return nil, fmt.Errorf("dit: QKV layout %q is not interleaved or flat; take it from the snapshot discovery", o.QKV)
	}
	if o.AdaLNType != ggml.F32 && o.AdaLNType != ggml.BF16 && o.AdaLNType != ggml.F16 {
		return nil, fmt.Errorf("dit: AdaLN tables cannot be stored as %s (use f32, bf16 or f16)", o.AdaLNType)
	}
	switch o.WeightType {
	case 0, ggml.BF16, ggml.F16, ggml.Q8_0, ggml.Q4_K:
	default:
		return nil, fmt.Errorf("dit: cannot store weights as %s (use bf16, f16, q8_0 or q4_K)", o.WeightType)
	}
	if err := cfg.Validate(src); err != nil {
		return nil, err
	}
	m := &Model{Cfg: cfg, b: b, src: src, opt: o, active: make([]bool, cfg.Layers)}
	for i := range m.active {
		m.active[i] = true
	}
	inv, err := weights.Float32(src, "rope.inv_freq")
	if err != nil {
		return nil, err
	}
	m.invFreq = inv
	if m.topWS, err = m.upload(names(&m.top, "")); err != nil {
		return nil, err
	}
	if err := bind(m.topWS, &m.top, ""); err != nil {
		return nil, err
	}
	textNames := names(&m.text, "")
	for i := 0; i < cfg.RefinerLayers; i++ {
		textNames = append(textNames, names(&Core{}, fmt.Sprintf("token_refiner.blocks.%d.", i))...)
	}
	if m.textWS, err = m.upload(textNames); err != nil {
		return nil, err
	}
	if err := bind(m.textWS, &m.text, ""); err != nil {
		return nil, err
	}
	m.refiner = make([]Core, cfg.RefinerLayers)
	for i := range m.refiner {
		if err := bind(m.textWS, &m.refiner[i], fmt.Sprintf("token_refiner.blocks.%d.", i)); err != nil {
			return nil, err
		}
	}
	if o.Residency == Resident {
		if m.coreWS, m.blocks, err = m.loadBlocks(allBlocks(cfg.Layers)); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Close frees every weight and table.
func (m *Model) Close() {
	for _, ws := range []*ggml.WeightSet{m.topWS, m.textWS, m.coreWS} {
		if ws != nil {
			ws.Free()
		}
	}
	if m.ada != nil {
		m.ada.ws.Free()
	}
}

// SetActive selects the blocks forwards run (layer thinning); nil restores all.
func (m *Model) SetActive(active []bool) error {
	if active == nil {
		for i := range m.active {
			m.active[i] = true
		}
		return nil
	}
	if len(active) != m.Cfg.Layers {
		return fmt.Errorf("dit: %d block flags for %d blocks", len(active), m.Cfg.Layers)
	}
	copy(m.active, active)
	return nil
}

func allBlocks(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// loadBlocks uploads the core weights of the given blocks into one set.
func (m *Model) loadBlocks(idx []int) (*ggml.WeightSet, []Core, error) {
	var ns []string
	for _, i := range idx {
		ns = append(ns, names(&Core{}, fmt.Sprintf("blocks.%d.", i))...)
	}
	ws, err := m.upload(ns)
	if err != nil {
		return nil, nil, err
	}
	cores := make([]Core, m.Cfg.Layers)
	for _, i := range idx {
		if err := bind(ws, &cores[i], fmt.Sprintf("blocks.%d.", i)); err != nil {
			ws.Free()
			return nil, nil, err
		}
	}
	return ws, cores, nil
}

// upload creates, allocates and fills a weight set from the checkpoint.
// Vectors (norm gains, biases) become F32 because the graph's elementwise
// ops are f32; matrices keep their stored type unless Options.WeightType
// asks for another (and the row length allows it).
func (m *Model) upload(ns []string) (*ggml.WeightSet, error) {
	ws := m.b.NewWeightSet(len(ns))
	type job struct {
		t    *ggml.Tensor
		name string
		info weights.TensorInfo
	}
	jobs := make([]job, 0, len(ns))
	for _, n := range ns {
		info, ok := m.src.Lookup(n)
		if !ok {
			ws.Free()
			return nil, fmt.Errorf("dit: checkpoint has no %s", n)
		}
		shape := make([]int, len(info.Shape))
		for i, d := range info.Shape {
			shape[len(shape)-1-i] = int(d) // PyTorch [out, in] -> ggml [in, out]
		}
		dt, err := storeType(info.DType)
		if err != nil {
			ws.Free()
			return nil, fmt.Errorf("dit: %s: %w", n, err)
		}
		switch {
		case len(shape) == 1:
			dt = ggml.F32
		case m.opt.WeightType != 0 && !f32Island(n) && shape[0]%m.opt.WeightType.BlockSize() == 0:
			dt = m.opt.WeightType
		}
		jobs = append(jobs, job{ws.Add(n, dt, shape...), n, info})
	}
	if err := ws.Alloc(); err != nil {
		ws.Free()
		return nil, err
	}
	for _, j := range jobs {
		raw, _ := m.src.Data(j.name)
		stored, _ := storeType(j.info.DType)
		if stored == j.t.DType() {
			j.t.SetRaw(raw)
			continue
		}
		j.t.SetF32(ggml.Dequantize(stored, raw, int(j.info.Elements())))
	}
	return ws, nil
}

// f32Island reports the tensors the release stores in F32 whatever the
// rest: they touch the latents directly (patch projections, output heads)
// or the timestep (time embedder).
func f32Island(name string) bool {
	for _, p := range []string{"video_patch_proj.", "audio_patch_proj.", "time_embedder.", "final_layer.video_out.", "final_layer.audio_out."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func storeType(d weights.DType) (ggml.DType, error) {
	switch d {
	case weights.F32:
		return ggml.F32, nil
	case weights.F16:
		return ggml.F16, nil
	case weights.BF16:
		return ggml.BF16, nil
	case weights.Q8_0:
		return ggml.Q8_0, nil
	case weights.Q4_K:
		return ggml.Q4_K, nil
	}
	return 0, errors.New("unsupported dtype " + string(d))
}

func (m *Model) qkv() qkvLayout {
	if m.opt.QKV == weights.QKVInterleaved {
		return qkvInterleaved
	}
	return qkvFlat
}

// tapper returns a function that marks a graph tensor for the tap hook,
// and a function to deliver the marked tensors after Compute.
func (m *Model) tapper(g *ggml.Graph) (mark func(string, *ggml.Tensor), deliver func()) {
	var marked []struct {
		name string
		t    *ggml.Tensor
	}
	if m.Tap == nil {
		return func(string, *ggml.Tensor) {}, func() {}
	}
	mark = func(name string, t *ggml.Tensor) {
		t = g.Cont(t)
		g.Output(t)
		marked = append(marked, struct {
			name string
			t    *ggml.Tensor
		}{name, t})
	}
	deliver = func() {
		for _, x := range marked {
			m.Tap(x.name, []int{x.t.Ne(1) * x.t.Ne(2) * x.t.Ne(3), x.t.Ne(0)}, x.t.F32())
		}
	}
	return mark, deliver
}

// EncodeText runs the text path once: condition_proj, the token refiner
// and its final norm over the Qwen states (rows × text_dim, row-major).
// It returns the refined rows (rows × hidden).
func (m *Model) EncodeText(states []float32, rows int) ([]float32, error) {
	c := m.Cfg
	if rows < 1 || len(states) != rows*c.TextDim {
		return nil, fmt.Errorf("dit: %d text values for %d rows of width %d", len(states), rows, c.TextDim)
	}
	g := m.b.NewGraph(0)
	defer g.Free()
	mark, deliver := m.tapper(g)
	x := g.Input("text", ggml.F32, c.TextDim, rows)
	x.SetF32(states)
	h := linear(g, m.text.Proj, m.text.ProjB, x)
	mark("text.proj", h)
	for i := range m.refiner {
		h = m.refiner[i].refine(g, h, attnCtx{cfg: c, layout: m.qkv(), exact: m.opt.ExactKV, name: fmt.Sprintf("refiner.%d.attn", i)})
	}
	h = rmsNorm(g, h, m.text.FinalNorm, c.FinalNormEps)
	mark("refiner.out", h)
	g.Output(h)
	if err := m.compute("text", g); err != nil {
		return nil, err
	}
	deliver()
	return h.F32(), nil
}
