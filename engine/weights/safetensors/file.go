package safetensors

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"syscall"
)

// File is an open, memory-mapped safetensors file. Tensor data are slices
// of the read-only mapping: the pages belong to the page cache, so reading
// a tensor never grows the process's anonymous memory. Slices are invalid
// after Close.
type File struct {
	Path string
	*Header
	data   []byte // the whole file, mapped read-only
	byName map[string]int
}

// Tensor is a tensor's description plus its bytes in the mapping.
type Tensor struct {
	TensorInfo
	// Data is little-endian, row-major, len == Bytes(); it aliases the
	// mapping and must not be written.
	Data []byte
}

// Float32 returns the tensor's values widened to float32 (a copy).
func (t Tensor) Float32() ([]float32, error) {
	v, err := ToFloat32(t.DType, t.Data)
	if err != nil {
		return nil, fmt.Errorf("safetensors: tensor %s: %w", t.Name, err)
	}
	return v, nil
}

// Open maps path and validates its header.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	var prefix [8]byte
	if _, err := io.ReadFull(f, prefix[:]); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	n, err := ReadHeaderLength(prefix[:], size)
	if err != nil {
		return nil, withPath(err, path)
	}
	js := make([]byte, n)
	if _, err := f.ReadAt(js, 8); err != nil {
		return nil, fmt.Errorf("safetensors: read header of %s: %w", path, err)
	}
	h, err := ParseHeader(js, size)
	if err != nil {
		return nil, withPath(err, path)
	}
	sf := &File{Path: path, Header: h, byName: make(map[string]int, len(h.Tensors))}
	for i, t := range h.Tensors {
		sf.byName[t.Name] = i
	}
	if size > 0 {
		sf.data, err = syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			return nil, fmt.Errorf("safetensors: map %s: %w", path, err)
		}
	}
	return sf, nil
}

func withPath(err error, path string) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.Path = path
	}
	return err
}

// Close unmaps the file.
func (f *File) Close() error {
	if f.data == nil {
		return nil
	}
	err := syscall.Munmap(f.data)
	f.data = nil
	return err
}

// Names lists the tensor names in sorted order.
func (f *File) Names() []string {
	out := make([]string, 0, len(f.byName))
	for n := range f.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Info describes one tensor without touching its data.
func (f *File) Info(name string) (TensorInfo, bool) {
	i, ok := f.byName[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// Tensor returns a tensor whose Data aliases the mapping.
func (f *File) Tensor(name string) (Tensor, bool) {
	ti, ok := f.Info(name)
	if !ok {
		return Tensor{}, false
	}
	off := f.DataOffset
	return Tensor{TensorInfo: ti, Data: f.data[off+ti.Begin : off+ti.End : off+ti.End]}, true
}

// Mapping is the whole file as mapped (header included); callers that
// hand memory to a backend need the mapping's base to reason about
// alignment and page boundaries.
func (f *File) Mapping() []byte { return f.data }

// Aligned16 reports whether the data section starts on a 16-byte boundary,
// the condition for zero-copy use by Metal buffers.
func (f *File) Aligned16() bool { return f.DataOffset%16 == 0 }
