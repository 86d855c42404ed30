package gguf

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// Writer builds a GGUF v3 file. Tensor data may come from memory or be
// produced while writing (AddFunc), so a multi-GB output never has to be
// held at once.
type Writer struct {
	kv      []kvPair
	tensors []wTensor
	names   map[string]bool
}

type kvPair struct {
	key string
	val any
}

type wTensor struct {
	info TensorInfo
	fill func(w *bufio.Writer) error
}

// SetString adds a string key.
func (w *Writer) SetString(key, val string) { w.kv = append(w.kv, kvPair{key, val}) }

// SetUint32 adds a uint32 key.
func (w *Writer) SetUint32(key string, val uint32) { w.kv = append(w.kv, kvPair{key, val}) }

// Add appends a tensor; dims are in ggml order (ne0 first).
func (w *Writer) Add(name string, t Type, dims []int64, data []byte) error {
	return w.AddFunc(name, t, dims, func(bw *bufio.Writer) error {
		_, err := bw.Write(data)
		return err
	}, int64(len(data)))
}

// AddFunc appends a tensor whose size bytes are written by fill.
func (w *Writer) AddFunc(name string, t Type, dims []int64, fill func(*bufio.Writer) error, size int64) error {
	if w.names == nil {
		w.names = map[string]bool{}
	}
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	if w.names[name] || len(dims) == 0 || len(dims) > maxDims || t.RowBytes(n) != size || t.RowBytes(dims[0]) < 0 {
		return fmt.Errorf("gguf: cannot add tensor %s: duplicate name, bad dims %v or %d bytes for %s", name, dims, size, t)
	}
	w.names[name] = true
	w.tensors = append(w.tensors, wTensor{TensorInfo{Name: name, Dims: append([]int64(nil), dims...), Type: t, Bytes: size}, fill})
	return nil
}

// WriteFile writes the file atomically (temporary file, sync, rename).
func (w *Writer) WriteFile(path string) (err error) {
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
	bw := bufio.NewWriterSize(f, 4<<20)
	if err = w.write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
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

func (w *Writer) write(bw *bufio.Writer) error {
	var hdr []byte
	le := binary.LittleEndian
	str := func(s string) {
		hdr = le.AppendUint64(hdr, uint64(len(s)))
		hdr = append(hdr, s...)
	}
	hdr = append(hdr, "GGUF"...)
	hdr = le.AppendUint32(hdr, 3)
	hdr = le.AppendUint64(hdr, uint64(len(w.tensors)))
	hdr = le.AppendUint64(hdr, uint64(len(w.kv)))
	for _, p := range w.kv {
		str(p.key)
		switch v := p.val.(type) {
		case string:
			hdr = le.AppendUint32(hdr, tString)
			str(v)
		case uint32:
			hdr = le.AppendUint32(hdr, tUint32)
			hdr = le.AppendUint32(hdr, v)
		case float32:
			hdr = le.AppendUint32(hdr, tFloat32)
			hdr = le.AppendUint32(hdr, math.Float32bits(v))
		}
	}
	var off int64
	for i := range w.tensors {
		t := &w.tensors[i].info
		t.Offset = off
		str(t.Name)
		hdr = le.AppendUint32(hdr, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			hdr = le.AppendUint64(hdr, uint64(d))
		}
		hdr = le.AppendUint32(hdr, uint32(t.Type))
		hdr = le.AppendUint64(hdr, uint64(off))
		off += (t.Bytes + DefaultAlignment - 1) / DefaultAlignment * DefaultAlignment
	}
	for len(hdr)%DefaultAlignment != 0 {
		hdr = append(hdr, 0)
	}
	if _, err := bw.Write(hdr); err != nil {
		return err
	}
	var pad [DefaultAlignment]byte
	for _, t := range w.tensors {
		if err := t.fill(bw); err != nil {
			return fmt.Errorf("gguf: write tensor %s: %w", t.info.Name, err)
		}
		if r := t.info.Bytes % DefaultAlignment; r != 0 {
			if _, err := bw.Write(pad[:DefaultAlignment-r]); err != nil {
				return err
			}
		}
	}
	return nil
}
