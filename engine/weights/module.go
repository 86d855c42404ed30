package weights

import (
	"errors"
	"fmt"
	"strings"

	"h3studio/engine/ggml"
)

// LoadOptions configures LoadModule.
type LoadOptions struct {
	// Prefix is prepended to every tag ("" for the checkpoint root).
	Prefix string
	// Dims resolves the names used in `shape`, `ggml` and `st` tags
	// (Dimensioned modules add their own).
	Dims map[string]int64
	// Store picks each weight's backend dtype; nil keeps the checkpoint's
	// dtype for matrices and widens vectors (1-D) to F32, because ggml's
	// elementwise ops want f32 operands.
	Store func(info TensorInfo) (ggml.DType, error)
	// Copy disables zero-copy placement even where the file allows it.
	Copy bool
	// Transforms computes the weights tagged `transform:"name"` on the
	// host, for graphs that want a weight in another form than the
	// checkpoint stores (weight norm folded, kernels reordered). They are
	// stored as f32.
	Transforms map[string]Transform
}

// A Transform reads the checkpoint tensor(s) behind the field named name
// (its `st` name under the prefix) and returns the weight's f32 values in
// the field's ggml order. want is the field's `shape` tag resolved (nil
// without one); ReadFloat32 checks a stored tensor against it. Missing or
// misshaped tensors are errors naming them.
type Transform func(src Source, name string, want []int64) ([]float32, error)

// ReadFloat32 reads a stored tensor as f32, checking its checkpoint shape
// against want (nil: any shape); its errors read as LoadModule's.
func ReadFloat32(src Source, name string, want []int64) ([]float32, error) {
	info, ok := src.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("missing %s", name)
	}
	if want != nil && fmt.Sprint(want) != fmt.Sprint(info.Shape) {
		return nil, fmt.Errorf("%s: shape %v, want %v", name, info.Shape, want)
	}
	v, err := Float32(src, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return v, nil
}

// Module is a loaded module's weight storage.
type Module struct {
	sets []*ggml.WeightSet
	// Mapped and Copied count bytes placed zero-copy over the mapping and
	// bytes copied into backend buffers; Filled, bytes of a generated
	// source filled where they live (their stored size).
	Mapped, Copied, Filled int64
}

// ModuleOf is the storage of weights placed without a Source (seeded
// synthetic sets for benchmarks): Free releases the sets.
func ModuleOf(sets ...*ggml.WeightSet) *Module { return &Module{sets: sets} }

// Size is the backend memory the module's weights take, in bytes.
func (m *Module) Size() int {
	n := 0
	for _, s := range m.sets {
		n += s.Size()
	}
	return n
}

// Free releases the backend buffers (the mapping belongs to the Source).
func (m *Module) Free() {
	for _, s := range m.sets {
		s.Free()
	}
	m.sets = nil
}

// GGMLType maps a stored dtype to ggml's.
func GGMLType(d DType) (ggml.DType, error) {
	switch d {
	case F32:
		return ggml.F32, nil
	case F16:
		return ggml.F16, nil
	case BF16:
		return ggml.BF16, nil
	case Q8_0:
		return ggml.Q8_0, nil
	case Q4_K:
		return ggml.Q4_K, nil
	}
	return 0, fmt.Errorf("dtype %s has no ggml equivalent", d)
}

func defaultStore(info TensorInfo) (ggml.DType, error) {
	if len(info.Shape) <= 1 {
		return ggml.F32, nil
	}
	return GGMLType(info.DType)
}

// GGMLShape reverses a checkpoint shape into ggml order. Tensors of more
// than two axes keep their leading (output) axis and flatten the rest,
// which is how H3's models consume convolution kernels: as
// [in*k..., out] matrices.
func GGMLShape(s []int64) []int {
	switch len(s) {
	case 0:
		return []int{1}
	case 1:
		return []int{int(s[0])}
	}
	rest := int64(1)
	for _, d := range s[1:] {
		rest *= d
	}
	return []int{int(rest), int(s[0])}
}

// MapAlign is the file-offset alignment a tensor needs to be placed
// zero-copy: ggml's tensor alignment (32), which also satisfies Metal's 16.
const MapAlign = 32

// Mappable reports whether info can be placed over the mapping without a
// copy when stored as dt.
func Mappable(info TensorInfo, dt ggml.DType) bool {
	st, err := GGMLType(info.DType)
	return err == nil && st == dt && info.Offset%MapAlign == 0
}

// LoadModule fills module's `st`-tagged *ggml.Tensor fields from src on b.
// It checks everything first and reports every missing or misshaped tensor
// in one error. Tensors whose file offset is aligned and whose dtype is
// kept are placed zero-copy over the file mapping (one weight set per
// file); the rest, and every transformed weight, are copied into one
// backend buffer, converting dtype where Store asks, with no staging copy
// of stored tensors.
func LoadModule(b *ggml.Backend, src Source, module any, o LoadOptions) (*Module, error) {
	plans, err := planModule(src, module, o)
	if err != nil {
		return nil, fmt.Errorf("weights: load %s: %w", moduleName(o.Prefix), err)
	}
	m := &Module{}
	mapped := map[string][]loadPlan{}
	var copied, grown []loadPlan
	seeded, _ := src.(Seeded)
	for _, p := range plans {
		if _, ok := seedInit(seeded, p); ok {
			grown = append(grown, p)
			continue
		}
		// a Source held in memory (no mapping) is copied
		if p.host == nil && !o.Copy && b.Caps().ZeroCopy && Mappable(p.info, p.dt) && src.Mapping(p.info.File) != nil {
			mapped[p.info.File] = append(mapped[p.info.File], p)
		} else {
			copied = append(copied, p)
		}
	}
	fail := func(err error) (*Module, error) {
		m.Free()
		return nil, fmt.Errorf("weights: load %s: %w", moduleName(o.Prefix), err)
	}
	for file, ps := range mapped {
		ws := b.NewWeightSet(len(ps))
		m.sets = append(m.sets, ws)
		offs := map[string]int{}
		for _, p := range ps {
			*p.f.dst = ws.Add(p.f.name, p.dt, p.shape...)
			offs[p.f.name] = int(p.info.Offset)
		}
		zc, err := ws.AllocHost(src.Mapping(file), offs)
		if err != nil {
			return fail(err)
		}
		for _, p := range ps {
			if zc {
				m.Mapped += p.info.Bytes
			} else {
				m.Copied += p.info.Bytes
			}
		}
	}
	if len(grown) > 0 {
		if err := m.fillIn(b, seeded, grown); err != nil {
			return fail(err)
		}
	}
	if len(copied) == 0 {
		return m, nil
	}
	if err := m.copyIn(b, src, copied); err != nil {
		return fail(err)
	}
	return m, nil
}

// seedInit is how a generated source draws plan p's tensor (false: p is
// stored, or computed on the host).
func seedInit(src Seeded, p loadPlan) (ggml.Init, bool) {
	if src == nil || p.host != nil {
		return ggml.Init{}, false
	}
	return src.Init(p.info.Name)
}

// fillIn places plans of a generated source in one new backend buffer and
// fills them there (ggml.WeightSet.FillSeeded, converting to each
// weight's backend dtype), so nothing of their size passes through the
// host.
func (m *Module) fillIn(b *ggml.Backend, src Seeded, plans []loadPlan) error {
	ws := b.NewWeightSet(len(plans))
	m.sets = append(m.sets, ws)
	inits := map[*ggml.Tensor]ggml.Init{}
	for _, p := range plans {
		*p.f.dst = ws.Add(p.f.name, p.dt, p.shape...)
		inits[*p.f.dst], _ = seedInit(src, p)
	}
	if err := ws.Alloc(); err != nil {
		return err
	}
	if err := ws.FillSeeded(src.Seed(), func(t *ggml.Tensor) ggml.Init { return inits[t] }); err != nil {
		return err
	}
	for _, p := range plans {
		m.Filled += p.info.Bytes
	}
	return nil
}

// loadPlan is one weight LoadModule places: stored (info) or computed on
// the host (host).
type loadPlan struct {
	f     field
	info  TensorInfo
	host  []float32
	dt    ggml.DType
	shape []int // ggml order
}

// planModule checks every field and decides its dtype and backend shape,
// running the transforms; it reports every problem at once.
func planModule(src Source, module any, o LoadOptions) ([]loadPlan, error) {
	store := o.Store
	if store == nil {
		store = defaultStore
	}
	fields, errs := walkFields(o.Prefix, module, o.Dims)
	var plans []loadPlan
	for _, f := range fields {
		p, err := planField(src, f, o.Transforms, store)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		plans = append(plans, p)
	}
	return plans, errors.Join(errs...)
}

func planField(src Source, f field, transforms map[string]Transform, store func(TensorInfo) (ggml.DType, error)) (loadPlan, error) {
	want, err := dimsOf(f, f.shape)
	if err != nil {
		return loadPlan{}, err
	}
	backend, err := dimsOf(f, f.ggml)
	if err != nil {
		return loadPlan{}, err
	}
	p := loadPlan{f: f, dt: ggml.F32}
	n := int64(0) // elements the backend shape must hold
	if f.transform != "" {
		tf, ok := transforms[f.transform]
		if !ok {
			return loadPlan{}, fmt.Errorf("%s: transform %q is not in LoadOptions.Transforms", f.name, f.transform)
		}
		if p.host, err = tf(src, f.name, want); err != nil {
			return loadPlan{}, err
		}
		// a derived tensor may share its source's checkpoint name
		p.f.name += "/" + f.transform
		if backend == nil {
			backend = want
		}
		n = int64(len(p.host))
	} else {
		info, ok := src.Lookup(f.name)
		if !ok {
			return loadPlan{}, fmt.Errorf("missing %s", f.name)
		}
		if want != nil && fmt.Sprint(want) != fmt.Sprint(info.Shape) {
			return loadPlan{}, fmt.Errorf("%s: shape %v, want %v", f.name, info.Shape, want)
		}
		if p.dt, err = store(info); err != nil {
			return loadPlan{}, fmt.Errorf("%s: %w", f.name, err)
		}
		p.info, n = info, info.Elements()
	}
	switch {
	case f.ggml == "" && f.transform == "":
		p.shape = GGMLShape(p.info.Shape)
	case f.ggml == "":
		p.shape = GGMLShape(backend)
	default:
		p.shape = make([]int, len(backend))
		for i, d := range backend {
			p.shape[i] = int(d)
		}
	}
	if got := int64(ggmlElements(p.shape)); got != n {
		return loadPlan{}, fmt.Errorf("%s: %d values for ggml shape %v", f.name, n, p.shape)
	}
	if p.shape[0]%p.dt.BlockSize() != 0 {
		return loadPlan{}, fmt.Errorf("%s: rows of %d cannot be stored as %s", f.name, p.shape[0], p.dt)
	}
	return p, nil
}

func ggmlElements(s []int) int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// copyIn places plans in one new backend buffer: stored tensors straight
// from the mapping, transformed ones from their host values.
func (m *Module) copyIn(b *ggml.Backend, src Source, plans []loadPlan) error {
	ws := b.NewWeightSet(len(plans))
	m.sets = append(m.sets, ws)
	for _, p := range plans {
		*p.f.dst = ws.Add(p.f.name, p.dt, p.shape...)
	}
	if err := ws.Alloc(); err != nil {
		return err
	}
	for _, p := range plans {
		if p.host != nil {
			(*p.f.dst).SetF32(p.host)
			m.Copied += int64(4 * len(p.host))
			continue
		}
		if err := Upload(*p.f.dst, src, p.info); err != nil {
			return err
		}
		// The copy is in the backend buffer now; drop the source pages
		// from this process so file-backed memory does not double it.
		releasePages(src.Mapping(p.info.File), p.info.Offset, p.info.Bytes)
		m.Copied += p.info.Bytes
	}
	return nil
}

func moduleName(prefix string) string {
	if prefix == "" {
		return "module"
	}
	return strings.TrimSuffix(prefix, ".")
}

// uploadChunk is the piece size Upload copies at a time.
const uploadChunk = 8 << 20

// Upload copies a stored tensor into t (allocated, same element count),
// straight from the mapping when the dtypes agree and through a float32
// conversion of this one tensor otherwise.
func Upload(t *ggml.Tensor, src Source, info TensorInfo) error {
	raw, ok := src.Data(info.Name)
	if !ok {
		return fmt.Errorf("no data for %s", info.Name)
	}
	st, err := GGMLType(info.DType)
	if err != nil {
		return fmt.Errorf("%s: %w", info.Name, err)
	}
	if int64(t.Elements()) != info.Elements() {
		return fmt.Errorf("%s: %d elements stored, backend tensor holds %d", info.Name, info.Elements(), t.Elements())
	}
	if st == t.DType() {
		// Copy in bounded pieces and release each piece's source pages at
		// once, so even the release's 520 MB AdaLN weight never holds more
		// than uploadChunk of its file in this process's memory.
		mapping := src.Mapping(info.File)
		for off := 0; off < len(raw); off += uploadChunk {
			end := min(off+uploadChunk, len(raw))
			t.SetRawAt(raw[off:end], off)
			releasePages(mapping, info.Offset+int64(off), int64(end-off))
		}
		return nil
	}
	t.SetF32(ggml.Dequantize(st, raw, int(info.Elements())))
	return nil
}

// Bind fills module's fields from tensors already in ws (named by their
// checkpoint names under prefix), as after BlockStreamer.Wait.
func Bind(ws *ggml.WeightSet, prefix string, module any) error {
	var missing []string
	fields, _ := walkFields(prefix, module, nil)
	for _, f := range fields {
		t := ws.Get(f.name)
		if t == nil {
			missing = append(missing, f.name)
			continue
		}
		*f.dst = t
	}
	if len(missing) > 0 {
		return fmt.Errorf("weights: bind %s: missing %s", moduleName(prefix), strings.Join(missing, ", "))
	}
	return nil
}
