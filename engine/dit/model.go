package dit

import (
	"fmt"
	"strings"

	"h3studio/engine/ggml"
	"h3studio/engine/plan"
	"h3studio/engine/tap"
	"h3studio/engine/weights"
)

// Options configures Load.
type Options struct {
	// QKV is the fused qkv row order of the checkpoint, as engine/weights
	// recorded it from the snapshot's provenance. Required.
	QKV weights.QKVLayout
	// Residency is the plan's: plan.Streamed keeps two blocks resident,
	// block i+1 copied from the mapped checkpoint into the second of two
	// rotating slots while block i runs (engine/weights.BlockStreamer), for
	// Macs whose memory cannot hold the 38 GB core. Anything else (the zero
	// value, plan.Resident, plan.Mapped) places every active block once,
	// zero-copy over the mapped file where its alignment allows, else
	// copied; one graph runs all blocks.
	Residency plan.Residency
	// Precision.Weights, when BF16, F16, Q8_0 or Q4_K, converts the weight
	// matrices at load time, except the F32 islands of the release (patch
	// projections, time embedder, output heads); F32 widens every matrix.
	// Precision.KV is the attention K/V type (zero: the backend's); F32 is
	// the parity runs' reference precision.
	Precision ggml.Precision
	// AdaLNType is the storage of the precomputed block modulation tables:
	// the zero value (F32's) keeps them exact; BF16 halves them (about
	// 0.4 GB per 20 steps of the release instead of 0.8).
	AdaLNType ggml.DType
}

// Model is a loaded DiT.
type Model struct {
	Cfg *Config
	b   *ggml.Backend
	src weights.Source
	opt Options

	top      Top
	text     TextPath
	blocks   []Core                  // resident blocks (entries of inactive ones are zero)
	blockMod map[int]*weights.Module // resident block storage
	mods     []*weights.Module       // top and text storage
	stream   *weights.BlockStreamer  // Streamed: over the active blocks
	streamOf []int                   // the active list the streamer was made for
	invFreq  []float32

	ada    *adaTables // nil until PrepareAdaLN
	lora   loraState  // adapters (SetLoRAs)
	active []bool
	reuse  coreReuse
	reduce *TokenReductionConfig

	// Tap, when set, receives the intermediates named in the package doc.
	Tap tap.Func
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

// Load validates the checkpoint against cfg and places the weights a
// forward needs every step (top level, text path, and for Resident the
// blocks). src must stay open while the model is used: streamed blocks
// and the AdaLN precompute read from it.
func Load(b *ggml.Backend, src weights.Source, cfg *Config, o Options) (*Model, error) {
	if o.QKV != weights.QKVInterleaved && o.QKV != weights.QKVFlat {
		return nil, fmt.Errorf("dit: QKV layout %q is not interleaved or flat; take it from the snapshot discovery", o.QKV)
	}
	if o.AdaLNType != ggml.F32 && o.AdaLNType != ggml.BF16 && o.AdaLNType != ggml.F16 {
		return nil, fmt.Errorf("dit: AdaLN tables cannot be stored as %s (use f32, bf16 or f16)", o.AdaLNType)
	}
	switch o.Residency {
	case "", plan.Resident, plan.Mapped, plan.Streamed:
	default:
		return nil, fmt.Errorf("dit: unknown residency %q", o.Residency)
	}
	if err := o.Precision.Check("dit", ggml.F32, ggml.BF16, ggml.F16, ggml.Q8_0, ggml.Q4_K); err != nil {
		return nil, err
	}
	if err := Validate(cfg, src); err != nil {
		return nil, err
	}
	m := &Model{Cfg: cfg, b: b, src: src, opt: o, active: make([]bool, cfg.Layers),
		blocks: make([]Core, cfg.Layers), blockMod: map[int]*weights.Module{}}
	for i := range m.active {
		m.active[i] = true
	}
	inv, err := weights.Float32(src, "rope.inv_freq")
	if err != nil {
		return nil, err
	}
	m.invFreq = inv
	m.text.Refiner = make([]Core, cfg.RefinerLayers)
	for _, mod := range []any{&m.top, &m.text} {
		wm, err := m.load(mod, "")
		if err != nil {
			m.Close()
			return nil, err
		}
		m.mods = append(m.mods, wm)
	}
	if !m.streamed() {
		if err := m.residentBlocks(); err != nil {
			m.Close()
			return nil, err
		}
	}
	return m, nil
}

// streamed reports whether blocks stream (Options.Residency).
func (m *Model) streamed() bool { return m.opt.Residency == plan.Streamed }

// load places one tagged module under prefix.
func (m *Model) load(module any, prefix string) (*weights.Module, error) {
	wm, err := weights.LoadModule(m.b, m.src, module, weights.LoadOptions{Prefix: prefix, Store: m.store})
	if err != nil {
		return nil, fmt.Errorf("dit: %w", err)
	}
	return wm, nil
}

// Close frees every weight and table (not the Source).
func (m *Model) Close() {
	for _, wm := range m.mods {
		wm.Free()
	}
	m.mods = nil
	for i, wm := range m.blockMod {
		wm.Free()
		delete(m.blockMod, i)
	}
	if m.stream != nil {
		m.stream.Close()
		m.stream = nil
	}
	m.dropTables()
	m.closeLoRAs()
}

// Placement reports the bytes of resident weights placed zero-copy over
// the mapped checkpoint and the bytes copied into backend buffers.
func (m *Model) Placement() (mapped, copied int64) {
	for _, wm := range m.mods {
		mapped, copied = mapped+wm.Mapped, copied+wm.Copied
	}
	for _, wm := range m.blockMod {
		mapped, copied = mapped+wm.Mapped, copied+wm.Copied
	}
	return mapped, copied
}

// SetActive selects the blocks forwards run (layer thinning); nil restores
// all. Resident weights of blocks no longer active are freed.
func (m *Model) SetActive(active []bool) error {
	if active == nil {
		active = make([]bool, m.Cfg.Layers)
		for i := range active {
			active[i] = true
		}
	}
	if len(active) != m.Cfg.Layers {
		return fmt.Errorf("dit: %d block flags for %d blocks", len(active), m.Cfg.Layers)
	}
	any := false
	for _, a := range active {
		any = any || a
	}
	if !any {
		return fmt.Errorf("dit: at least one block must stay active")
	}
	copy(m.active, active)
	for i, wm := range m.blockMod {
		if !m.active[i] {
			wm.Free()
			delete(m.blockMod, i)
			m.blocks[i] = Core{}
		}
	}
	return nil
}

func (m *Model) activeList() []int {
	var out []int
	for i, a := range m.active {
		if a {
			out = append(out, i)
		}
	}
	return out
}

// residentBlocks places every active block that is not yet resident.
func (m *Model) residentBlocks() error {
	for _, i := range m.activeList() {
		if m.blockMod[i] != nil {
			continue
		}
		wm, err := m.load(&m.blocks[i], fmt.Sprintf("blocks.%d.", i))
		if err != nil {
			return err
		}
		m.blockMod[i] = wm
	}
	return nil
}

// streamer returns the block streamer over the active blocks.
func (m *Model) streamer(active []int) (*weights.BlockStreamer, error) {
	if m.stream != nil && fmt.Sprint(m.streamOf) == fmt.Sprint(active) {
		return m.stream, nil
	}
	if m.stream != nil {
		m.stream.Close()
		m.stream = nil
	}
	prefixes := make([]string, len(active))
	for j, i := range active {
		prefixes[j] = fmt.Sprintf("blocks.%d.", i)
	}
	st, err := weights.NewBlockStreamer(m.b, m.src, prefixes, weights.Fields("", &Core{}), m.store)
	if err != nil {
		return nil, fmt.Errorf("dit: %w", err)
	}
	m.stream, m.streamOf = st, active
	return st, nil
}

// store picks each weight's backend type: vectors (norm gains, biases)
// become F32 because the graph's elementwise ops are f32; matrices keep
// their stored type unless the options convert them.
func (m *Model) store(info weights.TensorInfo) (ggml.DType, error) {
	wt, convert := m.opt.Precision.Weights.Get()
	if len(info.Shape) <= 1 || (convert && wt == ggml.F32) {
		return ggml.F32, nil
	}
	dt, err := weights.GGMLType(info.DType)
	if err != nil {
		return 0, err
	}
	if convert && !f32Island(info.Name) && info.Shape[len(info.Shape)-1]%int64(wt.BlockSize()) == 0 {
		return wt, nil
	}
	return dt, nil
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

func (m *Model) qkv() qkvLayout {
	if m.opt.QKV == weights.QKVInterleaved {
		return qkvInterleaved
	}
	return qkvFlat
}

// tapper returns a function that marks a graph tensor for the tap hook,
// and a function to deliver the marked tensors after Compute.
func (m *Model) tapper(g *ggml.Graph) (mark func(string, *ggml.Tensor), deliver func()) {
	tg := tap.On(g, m.Tap)
	return tg.Mark, tg.Deliver
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
	for i := range m.text.Refiner {
		a := attnCtx{cfg: c, layout: m.qkv(), kv: m.opt.Precision.KV, side: m.side(fmt.Sprintf("token_refiner.blocks.%d.", i)),
			name: fmt.Sprintf("refiner.%d.attn", i)}
		h = m.text.Refiner[i].refine(g, h, a)
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
