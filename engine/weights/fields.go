package weights

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"strings"

	"h3studio/engine/ggml"
)

var tensorPtrType = reflect.TypeOf((*ggml.Tensor)(nil))

// Dimensioned is a module whose `shape` and `ggml` tags (its own and those
// of the modules inside it) name dimensions only the instance knows: a
// conv's channel counts, a level's width. Its Dims overlay
// LoadOptions.Dims and the Dims of the modules around it; they may also
// fill {name} placeholders in `st` tags (a checkpoint index that depends
// on the config, as "encoder.block.{out}").
type Dimensioned interface{ Dims() map[string]int64 }

// field is one `st`-tagged weight of a module struct.
type field struct {
	name      string
	shape     string // the `shape` tag: checkpoint-order dims, names or numbers
	ggml      string // the `ggml` tag: the backend shape, ggml order
	transform string // the `transform` tag: a LoadOptions.Transforms key
	dims      map[string]int64
	dst       **ggml.Tensor
}

// Fields lists the checkpoint names of module's weights (module is a
// pointer to a struct). A *ggml.Tensor field tagged `st:"norm1.weight"`
// is a weight; a struct, pointer-to-struct (nil: absent), or slice or
// array of structs tagged `st:"blocks"` extends the prefix ("blocks.3."),
// so tags are the checkpoint's names verbatim; a slice or array tagged
// `first:"1"` numbers its elements from 1. A weight may carry
// `shape:"inner3,hidden"` (its checkpoint-order dims, each a number or a
// name from LoadOptions.Dims or a Dimensioned module around it),
// `ggml:"1,1,c,1"` (its backend shape, ggml order; default GGMLShape) and
// `transform:"name"` (computed on the host by LoadOptions.Transforms).
func Fields(prefix string, module any) []string {
	fs, _ := walkFields(prefix, module, nil)
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.name
	}
	return out
}

// walkFields lists module's weights; an `st` placeholder no Dims define
// is reported and its field left out.
func walkFields(prefix string, module any, dims map[string]int64) ([]field, []error) {
	var out []field
	var errs []error
	var walk func(prefix string, v reflect.Value, dims map[string]int64)
	walk = func(prefix string, v reflect.Value, dims map[string]int64) {
		if d, ok := v.Addr().Interface().(Dimensioned); ok {
			dims = maps.Clone(dims)
			if dims == nil {
				dims = map[string]int64{}
			}
			maps.Copy(dims, d.Dims())
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			tag, ok := sf.Tag.Lookup("st")
			if !ok {
				continue
			}
			tag, err := fillName(tag, dims)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s%s", prefix, err))
				continue
			}
			f := v.Field(i)
			switch {
			case f.Type() == tensorPtrType:
				out = append(out, field{prefix + tag, sf.Tag.Get("shape"), sf.Tag.Get("ggml"), sf.Tag.Get("transform"),
					dims, f.Addr().Interface().(**ggml.Tensor)})
			case f.Kind() == reflect.Struct:
				walk(prefix+tag+".", f, dims)
			case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
				if !f.IsNil() {
					walk(prefix+tag+".", f.Elem(), dims)
				}
			case (f.Kind() == reflect.Slice || f.Kind() == reflect.Array) && f.Type().Elem().Kind() == reflect.Struct:
				first, _ := strconv.Atoi(sf.Tag.Get("first"))
				for j := 0; j < f.Len(); j++ {
					walk(prefix+tag+"."+strconv.Itoa(first+j)+".", f.Index(j), dims)
				}
			default:
				panic("weights: field " + sf.Name + " has an st tag but is not a *ggml.Tensor, struct, pointer to struct, or slice or array of structs")
			}
		}
	}
	walk(prefix, reflect.ValueOf(module).Elem(), dims)
	return out, errs
}

// fillName replaces the {name} placeholders of an `st` tag.
func fillName(tag string, dims map[string]int64) (string, error) {
	for {
		i := strings.IndexByte(tag, '{')
		if i < 0 {
			return tag, nil
		}
		j := strings.IndexByte(tag[i:], '}')
		if j < 0 {
			return "", fmt.Errorf("%s: unclosed placeholder", tag)
		}
		n, ok := dims[tag[i+1:i+j]]
		if !ok {
			return "", fmt.Errorf("%s: placeholder %q is not a defined dimension", tag, tag[i+1:i+j])
		}
		tag = tag[:i] + strconv.FormatInt(n, 10) + tag[i+j+1:]
	}
}

// dimsOf resolves a `shape` or `ggml` tag ("" gives nil).
func dimsOf(f field, tag string) ([]int64, error) {
	if tag == "" {
		return nil, nil
	}
	parts := strings.Split(tag, ",")
	out := make([]int64, len(parts))
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if n, err := strconv.ParseInt(p, 10, 64); err == nil {
			out[i] = n
			continue
		}
		n, ok := f.dims[p]
		if !ok {
			return nil, fmt.Errorf("%s: tag %q names %q, which no Dims define", f.name, tag, p)
		}
		out[i] = n
	}
	return out, nil
}

// Slot is one weight of a module as LoadModule would place it: its
// checkpoint name, checkpoint rank and backend shape (ggml order).
type Slot struct {
	Name  string
	Rank  int
	Shape []int
}

// Slots lists module's weights with the shapes its tags resolve to (dims
// as LoadOptions.Dims), so a synthetic source (seeded benchmark weights)
// places a module exactly as a checkpoint would, without a file. Every
// weight needs a `shape` tag; transformed weights keep their stored shape.
func Slots(prefix string, module any, dims map[string]int64) ([]Slot, error) {
	fields, errs := walkFields(prefix, module, dims)
	var out []Slot
	for _, f := range fields {
		want, err := dimsOf(f, f.shape)
		if err == nil && want == nil {
			err = fmt.Errorf("%s: no shape tag", f.name)
		}
		backend, errG := dimsOf(f, f.ggml)
		if err = errors.Join(err, errG); err != nil {
			errs = append(errs, err)
			continue
		}
		s := Slot{Name: f.name, Rank: len(want), Shape: GGMLShape(want)}
		if backend != nil {
			s.Shape = make([]int, len(backend))
			for i, d := range backend {
				s.Shape[i] = int(d)
			}
		}
		out = append(out, s)
	}
	return out, errors.Join(errs...)
}
