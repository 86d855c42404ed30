package textenc

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
	"h3studio/engine/weights/safetensors"
)

var tensorPtrType = reflect.TypeOf((*ggml.Tensor)(nil))

// boundWeight is a module field and the checkpoint tensor that fills it.
type boundWeight struct {
	name string
	dst  **ggml.Tensor
}

// bindFields walks module (a pointer to a struct) and lists every
// `st`-tagged *ggml.Tensor field under prefix. Nested structs and slices of
// structs extend the prefix with their tag (and ".<index>" for slices), so
// tags are the checkpoint's tensor names verbatim.
func bindFields(prefix string, module any) []boundWeight {
	var out []boundWeight
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
				out = append(out, boundWeight{prefix + tag, f.Addr().Interface().(**ggml.Tensor)})
			case f.Kind() == reflect.Struct:
				walk(prefix+tag+".", f)
			case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
				for j := 0; j < f.Len(); j++ {
					walk(prefix+tag+"."+strconv.Itoa(j)+".", f.Index(j))
				}
			default:
				panic("textenc: field " + t.Field(i).Name + " has an st tag but is not a weight, struct or slice of structs")
			}
		}
	}
	walk(prefix, reflect.ValueOf(module).Elem())
	return out
}

// loadModule fills module's weights from src into a new WeightSet on b,
// reporting every missing tensor at once. Vectors (norm scales, biases) are
// kept in f32; matrices are stored as wt says (PrecisionAuto: as the
// checkpoint stores them). Tensors of more than two axes (the Conv3d patch
// embedding) are flattened to [out, rest].
func loadModule(b *ggml.Backend, src weights.Source, prefix string, module any, wt Precision) (*ggml.WeightSet, error) {
	fields := bindFields(prefix, module)
	ws := b.NewWeightSet(len(fields))
	type pending struct {
		t    *ggml.Tensor
		info weights.TensorInfo
	}
	var todo []pending
	var errs []error
	for _, f := range fields {
		st, ok := src.Lookup(f.name)
		if !ok {
			errs = append(errs, fmt.Errorf("textenc: load: missing tensor %s", f.name))
			continue
		}
		if len(st.Shape) == 0 || len(st.Shape) > 5 {
			errs = append(errs, fmt.Errorf("textenc: load %s: unsupported shape %v", f.name, st.Shape))
			continue
		}
		shape := ggmlShape(st.Shape)
		dt, err := storeType(st.DType, wt, shape)
		if err != nil {
			errs = append(errs, fmt.Errorf("textenc: load %s: %w", f.name, err))
			continue
		}
		t := ws.Add(f.name, dt, shape...)
		*f.dst = t
		todo = append(todo, pending{t, st})
	}
	if len(errs) > 0 {
		ws.Free()
		return nil, errors.Join(errs...)
	}
	if err := ws.Alloc(); err != nil {
		ws.Free()
		return nil, fmt.Errorf("textenc: load %s: %w", prefix, err)
	}
	for _, p := range todo {
		if err := upload(p.t, src, p.info); err != nil {
			ws.Free()
			return nil, err
		}
	}
	return ws, nil
}

// ggmlShape reverses a row-major shape into ggml order, flattening trailing
// axes of tensors with more than two.
func ggmlShape(s []int64) []int {
	if len(s) == 1 {
		return []int{int(s[0])}
	}
	rest := int64(1)
	for _, d := range s[1:] {
		rest *= d
	}
	return []int{int(rest), int(s[0])}
}

func storeType(file weights.DType, wt Precision, shape []int) (ggml.DType, error) {
	if len(shape) == 1 {
		return ggml.F32, nil
	}
	if wt != PrecisionAuto {
		want := wt.dtype()
		if shape[0]%want.BlockSize() != 0 {
			return 0, fmt.Errorf("row length %d is not a multiple of %s's block %d", shape[0], want, want.BlockSize())
		}
		return want, nil
	}
	switch file {
	case weights.BF16:
		return ggml.BF16, nil
	case weights.F16:
		return ggml.F16, nil
	case weights.F32:
		return ggml.F32, nil
	}
	return 0, fmt.Errorf("checkpoint dtype %s is not supported", file)
}

func upload(t *ggml.Tensor, src weights.Source, info weights.TensorInfo) error {
	data, ok := src.Data(info.Name)
	if !ok {
		return fmt.Errorf("textenc: load: tensor %s has no data", info.Name)
	}
	same := (t.DType() == ggml.F32 && info.DType == weights.F32) ||
		(t.DType() == ggml.BF16 && info.DType == weights.BF16) ||
		(t.DType() == ggml.F16 && info.DType == weights.F16)
	if same {
		t.SetRaw(data)
		return nil
	}
	v, err := safetensors.ToFloat32(safetensors.DType(info.DType), data)
	if err != nil {
		return fmt.Errorf("textenc: load %s: %w", info.Name, err)
	}
	t.SetF32(v)
	return nil
}

// shapeCheck collects weight shape mismatches against the config.
type shapeCheck struct{ errs []error }

func (c *shapeCheck) want(t *ggml.Tensor, shape ...int) {
	got := t.Shape()
	ok := len(got) == len(shape)
	for i := 0; ok && i < len(shape); i++ {
		ok = got[i] == shape[i]
	}
	if !ok {
		c.errs = append(c.errs, fmt.Errorf("textenc: weight %s has ggml shape %v, config wants %v", t.Name(), got, shape))
	}
}

func (c *shapeCheck) err() error { return errors.Join(c.errs...) }
