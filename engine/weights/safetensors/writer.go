package safetensors

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Alignment chooses where a written file's data section starts.
type Alignment int

const (
	// Align16 pads the header so the data section starts at 0 mod 64
	// (so also 0 mod 16 for Metal and 0 mod 32 for ggml), which lets a
	// backend map tensors zero-copy.
	Align16 Alignment = iota
	// Align8Mod16 reproduces the official MiniMax-H3 shards, whose data
	// sections start at 8 mod 16 (the reference writer pads the JSON to a
	// multiple of 8 and the length prefix adds 8).
	Align8Mod16
)

// Writer collects tensors and writes them as one safetensors file.
type Writer struct {
	Metadata map[string]string
	Align    Alignment
	names    map[string]bool
	entries  []entry
}

type entry struct {
	info TensorInfo
	data []byte
	size int64
	fill func(io.Writer) error // produces size bytes when data is nil
}

// Add appends a tensor; data must be len(shape product)*dtype size bytes.
func (w *Writer) Add(name string, dt DType, shape []int64, data []byte) error {
	if w.names == nil {
		w.names = map[string]bool{}
	}
	if name == "__metadata__" || name == "" || w.names[name] {
		return fmt.Errorf("safetensors: cannot add tensor %q: empty, reserved or duplicate name", name)
	}
	ti := TensorInfo{Name: name, DType: dt, Shape: append([]int64(nil), shape...)}
	if !dt.Valid() || ti.Elements()*dt.Size() != int64(len(data)) {
		return fmt.Errorf("safetensors: tensor %s: %d bytes do not fit shape %v of %s", name, len(data), shape, dt)
	}
	w.names[name] = true
	w.entries = append(w.entries, entry{info: ti, data: data, size: int64(len(data))})
	return nil
}

// AddFunc appends a tensor whose bytes fill writes while the file is being
// written, so a multi-GB file never has to be held in memory.
func (w *Writer) AddFunc(name string, dt DType, shape []int64, fill func(io.Writer) error) error {
	if w.names == nil {
		w.names = map[string]bool{}
	}
	ti := TensorInfo{Name: name, DType: dt, Shape: append([]int64(nil), shape...)}
	if name == "__metadata__" || name == "" || w.names[name] || !dt.Valid() {
		return fmt.Errorf("safetensors: cannot add tensor %q: empty, reserved or duplicate name, or bad dtype", name)
	}
	w.names[name] = true
	w.entries = append(w.entries, entry{info: ti, size: ti.Elements() * dt.Size(), fill: fill})
	return nil
}

// AddFloat32 encodes v as dt (F32, BF16 or F16) and adds it.
func (w *Writer) AddFloat32(name string, dt DType, shape []int64, v []float32) error {
	b, err := FromFloat32(dt, v)
	if err != nil {
		return err
	}
	return w.Add(name, dt, shape, b)
}

// Header returns the encoded header (length prefix included) that
// WriteFile would write; tensors are laid out in name order.
func (w *Writer) Header() ([]byte, error) {
	sort.Slice(w.entries, func(i, j int) bool { return w.entries[i].info.Name < w.entries[j].info.Name })
	var js bytes.Buffer
	js.WriteByte('{')
	if len(w.Metadata) > 0 {
		m, err := json.Marshal(w.Metadata)
		if err != nil {
			return nil, err
		}
		js.WriteString(`"__metadata__":`)
		js.Write(m)
	}
	var off int64
	for i, e := range w.entries {
		if i > 0 || len(w.Metadata) > 0 {
			js.WriteByte(',')
		}
		k, _ := json.Marshal(e.info.Name)
		shape := e.info.Shape
		if shape == nil {
			shape = []int64{}
		}
		v, err := json.Marshal(map[string]any{"dtype": e.info.DType, "shape": shape, "data_offsets": []int64{off, off + e.size}})
		if err != nil {
			return nil, err
		}
		js.Write(k)
		js.WriteByte(':')
		js.Write(v)
		off += e.size
	}
	js.WriteByte('}')
	// The data section starts at 8 + len(JSON).
	mod, want := int64(64), int64(56)
	if w.Align == Align8Mod16 {
		mod, want = 16, 0
	}
	for int64(js.Len())%mod != want {
		js.WriteByte(' ')
	}
	out := make([]byte, 8, 8+js.Len())
	binary.LittleEndian.PutUint64(out, uint64(js.Len()))
	return append(out, js.Bytes()...), nil
}

// WriteFile writes the file atomically: a temporary file in the same
// folder, synced, then renamed over path.
func (w *Writer) WriteFile(path string) error {
	hdr, err := w.Header()
	if err != nil {
		return err
	}
	return writeAtomic(path, func(f *os.File) error {
		bw := bufio.NewWriterSize(f, 4<<20)
		if _, err := bw.Write(hdr); err != nil {
			return err
		}
		for _, e := range w.entries {
			cw := &countWriter{w: bw}
			var err error
			if e.fill != nil {
				err = e.fill(cw)
			} else {
				_, err = cw.Write(e.data)
			}
			if err != nil {
				return err
			}
			if cw.n != e.size {
				return fmt.Errorf("safetensors: tensor %s: wrote %d bytes, its shape needs %d", e.info.Name, cw.n, e.size)
			}
		}
		return bw.Flush()
	})
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeAtomic runs fill on a temporary file next to path and renames it
// into place only when everything succeeded.
func writeAtomic(path string, fill func(*os.File) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = fill(f); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// WriteIndex writes model.safetensors.index.json for shards already
// written in dir (total_size is the sum of the data sections).
func WriteIndex(dir string, shards []string) error {
	idx := Index{Metadata: map[string]any{}, WeightMap: map[string]string{}}
	var total int64
	for _, name := range shards {
		f, err := Open(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		for _, t := range f.Tensors {
			idx.WeightMap[t.Name] = name
		}
		total += f.DataSize
		f.Close()
	}
	idx.Metadata["total_size"] = total
	js, err := json.MarshalIndent(idx, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, IndexName), func(f *os.File) error {
		_, err := f.Write(append(js, '\n'))
		return err
	})
}
