package safetensors

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// IndexName is the file that maps tensor names to shards.
const IndexName = "model.safetensors.index.json"

// Index is a parsed model.safetensors.index.json.
type Index struct {
	Metadata  map[string]any    `json:"metadata"`
	WeightMap map[string]string `json:"weight_map"`
}

// Set is a group of shards opened together: one sharded component, or a
// single file. Tensor names are unique across the set.
type Set struct {
	Dir    string
	Shards []*File // in file-name order
	owner  map[string]*File
}

// OpenDir opens dir/model.safetensors.index.json and every shard it names,
// or dir/model.safetensors when there is no index.
func OpenDir(dir string) (*Set, error) {
	raw, err := os.ReadFile(filepath.Join(dir, IndexName))
	if errors.Is(err, os.ErrNotExist) {
		return OpenFiles(dir, "model.safetensors")
	}
	if err != nil {
		return nil, err
	}
	var idx Index
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("safetensors: %s is not a valid index: %w", filepath.Join(dir, IndexName), err)
	}
	if len(idx.WeightMap) == 0 {
		return nil, fmt.Errorf("safetensors: %s has an empty weight_map", filepath.Join(dir, IndexName))
	}
	var names []string
	seen := map[string]bool{}
	for _, shard := range idx.WeightMap {
		if shard != filepath.Base(shard) || strings.HasPrefix(shard, ".") {
			return nil, fmt.Errorf("safetensors: %s names shard %q outside its folder", filepath.Join(dir, IndexName), shard)
		}
		if !seen[shard] {
			seen[shard] = true
			names = append(names, shard)
		}
	}
	sort.Strings(names)
	s, err := OpenFiles(dir, names...)
	if err != nil {
		return nil, err
	}
	for name, shard := range idx.WeightMap {
		f := s.owner[name]
		if f == nil || filepath.Base(f.Path) != shard {
			s.Close()
			return nil, fmt.Errorf("safetensors: %s places %s in %s, which does not hold it", filepath.Join(dir, IndexName), name, shard)
		}
	}
	if len(s.owner) != len(idx.WeightMap) {
		s.Close()
		return nil, fmt.Errorf("safetensors: shards in %s hold %d tensors but the index lists %d", dir, len(s.owner), len(idx.WeightMap))
	}
	return s, nil
}

// OpenFiles opens the named files in dir as one set.
func OpenFiles(dir string, names ...string) (*Set, error) {
	s := &Set{Dir: dir, owner: map[string]*File{}}
	for _, n := range names {
		f, err := Open(filepath.Join(dir, n))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Shards = append(s.Shards, f)
		for _, t := range f.Tensors {
			if prev := s.owner[t.Name]; prev != nil {
				s.Close()
				return nil, &FormatError{Path: f.Path, Tensor: t.Name, Msg: "also present in " + prev.Path}
			}
			s.owner[t.Name] = f
		}
	}
	return s, nil
}

// Close unmaps every shard.
func (s *Set) Close() error {
	var errs []error
	for _, f := range s.Shards {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}

// Tensor finds a tensor in whichever shard holds it.
func (s *Set) Tensor(name string) (Tensor, bool) {
	f := s.owner[name]
	if f == nil {
		return Tensor{}, false
	}
	return f.Tensor(name)
}

// Info describes a tensor and names the shard holding it.
func (s *Set) Info(name string) (TensorInfo, *File, bool) {
	f := s.owner[name]
	if f == nil {
		return TensorInfo{}, nil, false
	}
	ti, _ := f.Info(name)
	return ti, f, true
}

// Names lists every tensor name, sorted.
func (s *Set) Names() []string {
	out := make([]string, 0, len(s.owner))
	for n := range s.owner {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
