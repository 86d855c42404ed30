package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"os"
	"sort"
	"syscall"
)

// File is an open, memory-mapped GGUF file.
type File struct {
	Path    string
	Version uint32
	// KV holds the key-value pairs: strings, numbers (as int64, uint64 or
	// float64), bools, and arrays as []any.
	KV         map[string]any
	Tensors    []TensorInfo // in file order
	Alignment  int64
	DataOffset int64
	data       []byte
	byName     map[string]int
}

// Open maps and validates path.
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
	if st.Size() < 24 {
		return nil, &FormatError{Path: path, Msg: fmt.Sprintf("%d bytes is too short for a GGUF header", st.Size())}
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("gguf: map %s: %w", path, err)
	}
	g, err := Parse(data)
	if err != nil {
		syscall.Munmap(data)
		var fe *FormatError
		if errors.As(err, &fe) {
			fe.Path = path
		}
		return nil, err
	}
	g.Path = path
	return g, nil
}

// Parse validates a whole GGUF file held in data (which the File keeps).
func Parse(data []byte) (*File, error) {
	r := &cursor{b: data}
	if string(r.bytes(4)) != "GGUF" {
		return nil, &FormatError{Msg: "missing GGUF magic"}
	}
	g := &File{Version: r.u32(), KV: map[string]any{}, data: data, byName: map[string]int{}, Alignment: DefaultAlignment}
	if r.err == nil && g.Version != 3 && g.Version != 2 {
		return nil, &FormatError{Msg: fmt.Sprintf("version %d is not supported (want 2 or 3)", g.Version)}
	}
	nT, nKV := r.u64(), r.u64()
	if r.err == nil && (nT > maxTensors || nKV > maxKV) {
		return nil, &FormatError{Msg: fmt.Sprintf("%d tensors / %d keys exceed the reader's limits", nT, nKV)}
	}
	for i := uint64(0); i < nKV && r.err == nil; i++ {
		k := r.str()
		v := r.value(r.u32(), 0)
		if _, dup := g.KV[k]; dup && r.err == nil {
			return nil, &FormatError{Msg: "duplicate key " + k}
		}
		g.KV[k] = v
	}
	if a, ok := g.KV["general.alignment"]; ok {
		n, isU := a.(uint64)
		if !isU || n == 0 || n&(n-1) != 0 || n > 1<<16 {
			return nil, &FormatError{Msg: fmt.Sprintf("general.alignment %v is not a power of two", a)}
		}
		g.Alignment = int64(n)
	}
	for i := uint64(0); i < nT && r.err == nil; i++ {
		ti := TensorInfo{Name: r.str()}
		nd := r.u32()
		if nd == 0 || nd > maxDims {
			return nil, &FormatError{Tensor: ti.Name, Msg: fmt.Sprintf("%d dimensions (want 1..4)", nd)}
		}
		for d := uint32(0); d < nd; d++ {
			ti.Dims = append(ti.Dims, int64(r.u64()))
		}
		ti.Type = Type(r.u32())
		ti.Offset = int64(r.u64())
		if r.err != nil {
			break
		}
		if err := checkTensor(&ti, g.Alignment); err != nil {
			return nil, err
		}
		if _, dup := g.byName[ti.Name]; dup {
			return nil, &FormatError{Tensor: ti.Name, Msg: "duplicate tensor name"}
		}
		g.byName[ti.Name] = len(g.Tensors)
		g.Tensors = append(g.Tensors, ti)
	}
	if r.err != nil {
		return nil, &FormatError{Msg: r.err.Error()}
	}
	g.DataOffset = (int64(r.off) + g.Alignment - 1) / g.Alignment * g.Alignment
	return g, checkLayout(g, int64(len(data)))
}

func checkTensor(ti *TensorInfo, align int64) error {
	if !ti.Type.Known() {
		return &FormatError{Tensor: ti.Name, Msg: fmt.Sprintf("tensor type %d is not a ggml type this reader knows", uint32(ti.Type))}
	}
	n := uint64(1)
	for _, d := range ti.Dims {
		hi, lo := bits.Mul64(n, uint64(d))
		if d <= 0 || hi != 0 || lo > math.MaxInt64/8 {
			return &FormatError{Tensor: ti.Name, Msg: fmt.Sprintf("dims %v are not positive or overflow", ti.Dims)}
		}
		n = lo
	}
	if ti.Dims[0]%typeInfo[ti.Type].block != 0 {
		return &FormatError{Tensor: ti.Name, Msg: fmt.Sprintf("row of %d is not whole %s blocks", ti.Dims[0], ti.Type)}
	}
	ti.Bytes = ti.Type.RowBytes(int64(n))
	if ti.Offset < 0 || ti.Offset%align != 0 {
		return &FormatError{Tensor: ti.Name, Msg: fmt.Sprintf("offset %d is not aligned to %d", ti.Offset, align)}
	}
	return nil
}

// checkLayout verifies every tensor lies inside the file without overlap.
func checkLayout(g *File, size int64) error {
	order := make([]int, len(g.Tensors))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(a, b int) bool { return g.Tensors[order[a]].Offset < g.Tensors[order[b]].Offset })
	if g.DataOffset > size {
		return &FormatError{Msg: "tensor data section starts past the end of the file"}
	}
	room := size - g.DataOffset
	end := int64(0)
	for _, i := range order {
		t := g.Tensors[i]
		if t.Offset < end {
			return &FormatError{Tensor: t.Name, Msg: "overlaps the previous tensor"}
		}
		// Compared as room minus offset so no sum can overflow.
		if t.Offset > room || t.Bytes > room-t.Offset {
			return &FormatError{Tensor: t.Name, Msg: fmt.Sprintf("%d bytes at offset %d of the data section run past the end of the file", t.Bytes, t.Offset)}
		}
		end = t.Offset + t.Bytes
	}
	return nil
}

// Close unmaps the file.
func (g *File) Close() error {
	if g.data == nil {
		return nil
	}
	err := syscall.Munmap(g.data)
	g.data = nil
	return err
}

// Tensor returns a tensor's description and its bytes in the mapping.
func (g *File) Tensor(name string) (TensorInfo, []byte, bool) {
	i, ok := g.byName[name]
	if !ok {
		return TensorInfo{}, nil, false
	}
	t := g.Tensors[i]
	off := g.DataOffset + t.Offset
	return t, g.data[off : off+t.Bytes : off+t.Bytes], true
}

// Mapping is the whole mapped file.
func (g *File) Mapping() []byte { return g.data }

// String returns a string key's value ("" when absent or not a string).
func (g *File) String(key string) string {
	s, _ := g.KV[key].(string)
	return s
}

// cursor reads little-endian values with bounds checks; the first failure
// sticks and later reads return zero values.
type cursor struct {
	b   []byte
	off int
	err error
}

func (r *cursor) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.err = fmt.Errorf("header runs past the end of the file at byte %d", r.off)
		return nil
	}
	out := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return out
}

func (r *cursor) u32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *cursor) u64() uint64 {
	if b := r.bytes(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *cursor) str() string {
	n := r.u64()
	if n > maxStringLen {
		if r.err == nil {
			r.err = fmt.Errorf("string of %d bytes exceeds the reader's limit", n)
		}
		return ""
	}
	return string(r.bytes(n))
}

func (r *cursor) value(t uint32, depth int) any {
	switch t {
	case tUint8, tInt8, tBool:
		b := r.bytes(1)
		if b == nil {
			return nil
		}
		switch t {
		case tBool:
			return b[0] != 0
		case tInt8:
			return int64(int8(b[0]))
		}
		return uint64(b[0])
	case tUint16, tInt16:
		b := r.bytes(2)
		if b == nil {
			return nil
		}
		if t == tInt16 {
			return int64(int16(binary.LittleEndian.Uint16(b)))
		}
		return uint64(binary.LittleEndian.Uint16(b))
	case tUint32:
		return uint64(r.u32())
	case tInt32:
		return int64(int32(r.u32()))
	case tFloat32:
		return float64(math.Float32frombits(r.u32()))
	case tUint64:
		return r.u64()
	case tInt64:
		return int64(r.u64())
	case tFloat64:
		return math.Float64frombits(r.u64())
	case tString:
		return r.str()
	case tArray:
		et, n := r.u32(), r.u64()
		if depth > 0 || et == tArray {
			r.fail("nested arrays are not supported")
			return nil
		}
		// Every element takes at least one byte, so a count larger than
		// the rest of the file is a lie told to exhaust memory.
		if n > uint64(len(r.b)-r.off) {
			r.fail(fmt.Sprintf("array of %d elements cannot fit in the file", n))
			return nil
		}
		out := make([]any, 0, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			out = append(out, r.value(et, depth+1))
		}
		return out
	}
	r.fail(fmt.Sprintf("unknown value type %d", t))
	return nil
}

func (r *cursor) fail(msg string) {
	if r.err == nil {
		r.err = fmt.Errorf("%s", msg)
	}
}
