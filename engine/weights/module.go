package weights

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"h3studio/engine/ggml"
)

var tensorPtrType = reflect.TypeOf((*ggml.Tensor)(nil))

// field is one `st`-tagged weight of a module struct.
type field struct {
	name  string
	shape string // the `shape` tag: checkpoint-order dims, names or numbers
	dst   **ggml.Tensor
}

// Fields lists the checkpoint names of module's weights (module is a
// pointer to a struct). A *ggml.Tensor field tagged `st:"norm1.weight"`
// is a weight; a struct or slice-of-structs field tagged `st:"blocks"`
// extends the prefix ("blocks.3."), so tags are the checkpoint's names
// verbatim. A weight may carry `shape:"inner3,hidden"`: its checkpoint-order
// dims, each a number or a name looked up in LoadOptions.Dims.
func Fields(prefix string, module any) []string {
	fs := walkFields(prefix, module)
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out
}

func walkFields(prefix string, module any) []field {
	var out []field
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			tag, ok := t.Field(i).Tag.Lookup("st")
			if !ok {
				continue
			}
			f := v.Field(i)
			switch {
			case f.Type() == tensorPtrType:
				out = append(out, field{prefix + tag, t.Field(i).Tag.Get("shape"), f.Addr().Interface().(**ggml.Tensor)})
			case f.Kind() == reflect.Struct:
				walk(prefix+tag+".", f)
			case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
				for j := 0; j < f.Len(); j++ {
					walk(prefix+tag+"."+strconv.Itoa(j)+".", f.Index(j))
				}
			default:
				panic("weights: field " + t.Field(i).Name + " has an st tag but is not a *ggml.Tensor, struct or slice of structs")
			}
		}
	}
	walk(prefix, reflect.ValueOf(module).Elem())
	return out
}

// LoadOptions configures LoadModule.
type LoadOptions struct {
	// Prefix is prepended to every tag ("" for the checkpoint root).
	Prefix string
	// Dims resolves the names used in `shape` tags.
	Dims map[string]int64
	// Store picks each weight's backend dtype; nil keeps the checkpoint's
	// dtype for matrices and widens vectors (1-D) to F32, because ggml's
	// elementwise ops want f32 operands.
	Store func(info TensorInfo) (ggml.DType, error)
	// Copy disables zero-copy placement even where the file allows it.
	Copy bool
}

// Module is a loaded module's weight storage.
type Module struct {
	sets []*ggml.WeightSet
	// Mapped and Copied count bytes placed zero-copy over the mapping and
	// bytes copied into backend buffers.
	Mapped, Copied int64
}

// ModuleOf is the storage of weights placed without a Source (seeded
// synthetic sets for benchmarks): Free releases the sets.
func ModuleOf(sets ...*ggml.WeightSet) *Module { return &Module{sets: sets} }

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
// file); the rest are copied straight from the mapping into one backend
// buffer, converting dtype where Store asks, with no staging copy.
func LoadModule(b *ggml.Backend, src Source, module any, o LoadOptions) (*Module, error) {
	store := o.Store
	if store == nil {
		store = defaultStore
	}
	type plan struct {
		f    field
		info TensorInfo
		dt   ggml.DType
	}
	var plans []plan
	var errs []error
	for _, f := range walkFields(o.Prefix, module) {
		info, ok := src.Lookup(f.name)
		if !ok {
			errs = append(errs, fmt.Errorf("missing %s", f.name))
			continue
		}
		if err := checkShape(f, info, o.Dims); err != nil {
			errs = append(errs, err)
			continue
		}
		dt, err := store(info)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.name, err))
			continue
		}
		if r := GGMLShape(info.Shape); r[0]%dt.BlockSize() != 0 {
			errs = append(errs, fmt.Errorf("%s: rows of %d cannot be stored as %s", f.name, r[0], dt))
			continue
		}
		plans = append(plans, plan{f, info, dt})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("weights: load %s: %w", moduleName(o.Prefix), errors.Join(errs...))
	}
	m := &Module{}
	mapped := map[string][]plan{}
	var copied []plan
	for _, p := range plans {
		if !o.Copy && b.Caps().ZeroCopy && Mappable(p.info, p.dt) {
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
			*p.f.dst = ws.Add(p.f.name, p.dt, GGMLShape(p.info.Shape)...)
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
	if len(copied) == 0 {
		return m, nil
	}
	ws := b.NewWeightSet(len(copied))
	m.sets = append(m.sets, ws)
	for _, p := range copied {
		*p.f.dst = ws.Add(p.f.name, p.dt, GGMLShape(p.info.Shape)...)
	}
	if err := ws.Alloc(); err != nil {
		return fail(err)
	}
	for _, p := range copied {
		if err := Upload(*p.f.dst, src, p.info); err != nil {
			return fail(err)
		}
		// The copy is in the backend buffer now; drop the source pages
		// from this process so file-backed memory does not double it.
		releasePages(src.Mapping(p.info.File), p.info.Offset, p.info.Bytes)
		m.Copied += p.info.Bytes
	}
	return m, nil
}

func moduleName(prefix string) string {
	if prefix == "" {
		return "module"
	}
	return strings.TrimSuffix(prefix, ".")
}

func checkShape(f field, info TensorInfo, dims map[string]int64) error {
	if f.shape == "" {
		return nil
	}
	parts := strings.Split(f.shape, ",")
	want := make([]int64, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if n, err := strconv.ParseInt(p, 10, 64); err == nil {
			want[i] = n
			continue
		}
		n, ok := dims[p]
		if !ok {
			return fmt.Errorf("%s: shape tag names %q, which LoadOptions.Dims does not define", f.name, p)
		}
		want[i] = n
	}
	if fmt.Sprint(want) != fmt.Sprint(info.Shape) {
		return fmt.Errorf("%s: shape %v, want %v", f.name, info.Shape, want)
	}
	return nil
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
	for _, f := range walkFields(prefix, module) {
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
