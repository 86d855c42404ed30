package weights

import (
	"fmt"
	"path/filepath"
	"sort"

	"h3studio/engine/ggml"
	"h3studio/engine/weights/safetensors"
)

// DType names a tensor's storage type the way safetensors spells it, plus
// the GGUF block types ("Q8_0", "Q4_K").
type DType string

// Storage types the model code handles.
const (
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
	Q8_0 DType = "Q8_0"
	Q4_K DType = "Q4_K"
)

// blockInfo is (elements per block, bytes per block).
var blockInfo = map[DType][2]int64{
	F32: {1, 4}, F16: {1, 2}, BF16: {1, 2}, Q8_0: {32, 34}, Q4_K: {256, 144},
	"F64": {1, 8}, "I64": {1, 8}, "U64": {1, 8}, "I32": {1, 4}, "U32": {1, 4},
	"I16": {1, 2}, "U16": {1, 2}, "I8": {1, 1}, "U8": {1, 1}, "BOOL": {1, 1},
	"F8_E4M3": {1, 1}, "F8_E5M2": {1, 1},
}

// RowBytes is the storage size of n elements of d, or -1 when n is not a
// whole number of blocks or d is unknown.
func (d DType) RowBytes(n int64) int64 {
	b, ok := blockInfo[d]
	if !ok || n%b[0] != 0 {
		return -1
	}
	return n / b[0] * b[1]
}

// TensorInfo describes one stored tensor.
type TensorInfo struct {
	Name  string
	DType DType
	// Shape in checkpoint order (slowest axis first).
	Shape []int64
	Bytes int64
	// File holds the tensor; Offset is its absolute byte offset there.
	File   string
	Offset int64
}

// Elements is the product of the shape.
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// FileInfo describes one file of a Source.
type FileInfo struct {
	Path string
	// DataOffset is where tensor data begins (the safetensors data section
	// or the GGUF tensor-data section).
	DataOffset int64
	Size       int64
}

// Aligned16 reports whether the data section starts on 16 bytes.
func (f FileInfo) Aligned16() bool { return f.DataOffset%16 == 0 }

// Source is a read-only set of named tensors backed by mapped files.
type Source interface {
	// Tensors lists every tensor sorted by name.
	Tensors() []TensorInfo
	Lookup(name string) (TensorInfo, bool)
	// Data returns the tensor's stored bytes; the slice aliases a
	// read-only mapping and is valid until Close.
	Data(name string) ([]byte, bool)
	// Mapping returns the whole mapped file that holds the named tensor,
	// for callers that place weights over it zero-copy.
	Mapping(file string) []byte
	Files() []FileInfo
	// Metadata is the container's string metadata (safetensors
	// __metadata__ of the first file, GGUF string key-values).
	Metadata() map[string]string
	Close() error
}

// stSource adapts a safetensors.Set.
type stSource struct {
	set   *safetensors.Set
	infos []TensorInfo
	index map[string]int
}

// OpenSafetensors opens a component directory (index or model.safetensors)
// or a single .safetensors file.
func OpenSafetensors(path string) (Source, error) {
	var set *safetensors.Set
	var err error
	if filepath.Ext(path) == ".safetensors" {
		set, err = safetensors.OpenFiles(filepath.Dir(path), filepath.Base(path))
	} else {
		set, err = safetensors.OpenDir(path)
	}
	if err != nil {
		return nil, err
	}
	s := &stSource{set: set, index: map[string]int{}}
	for _, f := range set.Shards {
		for _, t := range f.Tensors {
			s.infos = append(s.infos, TensorInfo{
				Name: t.Name, DType: DType(t.DType), Shape: t.Shape, Bytes: t.Bytes(),
				File: f.Path, Offset: f.DataOffset + t.Begin,
			})
		}
	}
	sort.Slice(s.infos, func(i, j int) bool { return s.infos[i].Name < s.infos[j].Name })
	for i, t := range s.infos {
		s.index[t.Name] = i
	}
	return s, nil
}

func (s *stSource) Tensors() []TensorInfo { return s.infos }

func (s *stSource) Lookup(name string) (TensorInfo, bool) {
	i, ok := s.index[name]
	if !ok {
		return TensorInfo{}, false
	}
	return s.infos[i], true
}

func (s *stSource) Data(name string) ([]byte, bool) {
	t, ok := s.set.Tensor(name)
	return t.Data, ok
}

func (s *stSource) Mapping(file string) []byte {
	for _, f := range s.set.Shards {
		if f.Path == file {
			return f.Mapping()
		}
	}
	return nil
}

func (s *stSource) Files() []FileInfo {
	out := make([]FileInfo, len(s.set.Shards))
	for i, f := range s.set.Shards {
		out[i] = FileInfo{Path: f.Path, DataOffset: f.DataOffset, Size: f.DataOffset + f.DataSize}
	}
	return out
}

func (s *stSource) Metadata() map[string]string {
	if len(s.set.Shards) == 0 {
		return nil
	}
	return s.set.Shards[0].Metadata
}

func (s *stSource) Close() error { return s.set.Close() }

// Float32 reads a float tensor (F32, F16, BF16) as float32 values.
func Float32(src Source, name string) ([]float32, error) {
	t, ok := src.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("weights: no tensor %s", name)
	}
	raw, _ := src.Data(name)
	if t.DType == Q8_0 || t.DType == Q4_K {
		dt, _ := GGMLType(t.DType)
		return ggml.Dequantize(dt, raw, int(t.Elements())), nil
	}
	return safetensors.ToFloat32(safetensors.DType(t.DType), raw)
}

// rowSource is a Source that reads one row of a 2-D tensor without
// exposing the whole tensor (a synthetic source generates it).
type rowSource interface {
	Row(name string, i int) ([]byte, bool)
}

// Row is the stored bytes of row i of the 2-D tensor name: a slice of the
// mapping for stored tensors, computed alone for generated ones.
func Row(src Source, name string, i int) ([]byte, bool) {
	if r, ok := src.(rowSource); ok {
		return r.Row(name, i)
	}
	info, ok := src.Lookup(name)
	data, okData := src.Data(name)
	if !ok || !okData || len(info.Shape) != 2 || i < 0 || int64(i) >= info.Shape[0] {
		return nil, false
	}
	n := info.Bytes / info.Shape[0]
	return data[int64(i)*n : int64(i+1)*n], true
}
