package weights

import (
	"encoding/json"
	"sort"
	"strings"

	"h3studio/engine/weights/gguf"
)

// ggufPrefixes are name prefixes GGUF converters add in front of the
// checkpoint's own names; they are stripped so model tags match both.
var ggufPrefixes = []string{"model.diffusion_model.", "diffusion_model."}

type ggufSource struct {
	f     *gguf.File
	infos []TensorInfo
	index map[string]int
	raw   map[string]string // our name -> stored name
}

// OpenGGUF maps a GGUF file as a Source. Shapes are reported in
// checkpoint order (GGUF's dims reversed).
func OpenGGUF(path string) (Source, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	s := &ggufSource{f: f, index: map[string]int{}, raw: map[string]string{}}
	for _, t := range f.Tensors {
		name := t.Name
		for _, p := range ggufPrefixes {
			name = strings.TrimPrefix(name, p)
		}
		shape := make([]int64, len(t.Dims))
		for i, d := range t.Dims {
			shape[len(t.Dims)-1-i] = d
		}
		// GGUF holds at most four dims; Convert keeps longer shapes here.
		if js := f.String("h3studio.shape." + name); js != "" {
			var full []int64
			if json.Unmarshal([]byte(js), &full) == nil && product(full) == product(shape) {
				shape = full
			}
		}
		s.raw[name] = t.Name
		s.infos = append(s.infos, TensorInfo{Name: name, DType: DType(t.Type.String()), Shape: shape, Bytes: t.Bytes, File: path, Offset: f.DataOffset + t.Offset})
	}
	sort.Slice(s.infos, func(i, j int) bool { return s.infos[i].Name < s.infos[j].Name })
	for i, t := range s.infos {
		s.index[t.Name] = i
	}
	return s, nil
}

func (s *ggufSource) Tensors() []TensorInfo { return s.infos }

func (s *ggufSource) Lookup(name string) (TensorInfo, bool) {
	i, ok := s.index[name]
	if !ok {
		return TensorInfo{}, false
	}
	return s.infos[i], true
}

func (s *ggufSource) Data(name string) ([]byte, bool) {
	_, b, ok := s.f.Tensor(s.raw[name])
	return b, ok
}

func (s *ggufSource) Mapping(file string) []byte {
	if file == s.f.Path {
		return s.f.Mapping()
	}
	return nil
}

func (s *ggufSource) Files() []FileInfo {
	return []FileInfo{{Path: s.f.Path, DataOffset: s.f.DataOffset, Size: int64(len(s.f.Mapping()))}}
}

func (s *ggufSource) Metadata() map[string]string {
	out := map[string]string{}
	for k, v := range s.f.KV {
		if str, ok := v.(string); ok {
			out[k] = str
		}
	}
	return out
}

func (s *ggufSource) Close() error { return s.f.Close() }

func product(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}
