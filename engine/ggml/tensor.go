package ggml

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// Tensor is a node or leaf of a graph, or a weight of a WeightSet. Its
// shape is in ggml order (shape[0] = ne0 is contiguous); see the package doc.
type Tensor struct {
	h  unsafe.Pointer // struct ggml_tensor *
	g  *Graph         // owning graph; nil for weights
	ws *WeightSet     // owning weight set; nil for graph tensors
	dt DType
	ne [4]int64
	nb [4]int64
}

func panicf(format string, args ...any) { panic(fmt.Sprintf("ggml: "+format, args...)) }

func wrapTensor(h unsafe.Pointer, g *Graph, ws *WeightSet) *Tensor {
	if h == nil {
		panicf("internal: ggml returned no tensor (context full?)")
	}
	t := &Tensor{h: h, g: g, ws: ws}
	t.dt, t.ne, t.nb = cInfo(h)
	return t
}

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dt }

// Shape returns ne0..neN-1 with trailing 1s dropped (at least one axis).
func (t *Tensor) Shape() []int {
	n := 4
	for n > 1 && t.ne[n-1] == 1 {
		n--
	}
	s := make([]int, n)
	for i := range s {
		s[i] = int(t.ne[i])
	}
	return s
}

// Ne returns the size of axis i (0..3); axes beyond the shape are 1.
func (t *Tensor) Ne(i int) int { return int(t.ne[i]) }

// Nb returns the byte stride of axis i (0..3).
func (t *Tensor) Nb(i int) int { return int(t.nb[i]) }

// Elements returns the number of elements.
func (t *Tensor) Elements() int { return int(t.ne[0] * t.ne[1] * t.ne[2] * t.ne[3]) }

// NBytes returns the tensor's data size in bytes (for views: the span it covers).
func (t *Tensor) NBytes() int { return cNBytes(t.h) }

// Contiguous reports whether the tensor's elements are densely packed in
// ggml order (no view strides or permutation).
func (t *Tensor) Contiguous() bool { return cIsContiguous(t.h) }

// Name returns the tensor's name ("" if unnamed).
func (t *Tensor) Name() string { return cName(t.h) }

// SetName names the tensor (fmt.Sprintf(format, args...)) for parity taps
// and audit messages, and returns t. ggml keeps at most 63 bytes.
func (t *Tensor) SetName(format string, args ...any) *Tensor {
	name := format
	if len(args) > 0 {
		name = fmt.Sprintf(format, args...)
	}
	if len(name) > 63 {
		panicf("tensor name %q is longer than 63 bytes", name)
	}
	cSetName(t.h, name)
	return t
}

// String describes the tensor as `"name" [ne0 ne1 ...] dtype`.
func (t *Tensor) String() string {
	if t == nil {
		return "<nil tensor>"
	}
	return fmt.Sprintf("%q %v %s", t.Name(), t.Shape(), t.dt)
}

// SetF32 sets the tensor's contents from float32 values in ggml order,
// converting to the tensor's dtype (f16/bf16 rounding, or q8_0/q4_K
// quantization per row). Graph inputs are staged until Compute; weights are
// uploaded at once.
func (t *Tensor) SetF32(data []float32) {
	if len(data) != t.Elements() {
		panicf("SetF32 %s: got %d values, want %d", t, len(data), t.Elements())
	}
	if t.dt == F32 && t.ws != nil && littleEndian {
		t.SetRaw(f32View(data)) // a weight uploads at once: no copy to keep
		return
	}
	var raw []byte
	switch t.dt {
	case F32:
		raw = f32Bytes(data)
	case F16:
		raw = u16Bytes(F32ToF16(data))
	case BF16:
		raw = u16Bytes(F32ToBF16(data))
	case Q8_0, Q4_K:
		raw = Quantize(t.dt, data, int(t.ne[0]))
	default:
		panicf("SetF32 %s: use SetI32 for %s tensors", t, t.dt)
	}
	t.SetRaw(raw)
}

// SetI32 sets an i32 tensor (positions, row indices).
func (t *Tensor) SetI32(data []int32) {
	if t.dt != I32 {
		panicf("SetI32 %s: tensor is %s", t, t.dt)
	}
	if len(data) != t.Elements() {
		panicf("SetI32 %s: got %d values, want %d", t, len(data), t.Elements())
	}
	raw := make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(v))
	}
	t.SetRaw(raw)
}

// SetRaw sets the tensor's bytes in ggml's storage format for its dtype.
func (t *Tensor) SetRaw(data []byte) {
	if !t.Contiguous() {
		panicf("set %s: tensor is a non-contiguous view", t)
	}
	if len(data) != t.NBytes() {
		panicf("set %s: got %d bytes, want %d", t, len(data), t.NBytes())
	}
	switch {
	case t.ws != nil:
		t.ws.upload(t, data)
	case t.g != nil:
		t.g.stage(t, data)
	}
}

// SetRawAt writes data at byte offset off of a weight tensor's storage, so
// a loader can move a huge tensor (the release's AdaLN weight is 520 MB) in
// bounded pieces and release each piece's source pages as it goes. Only
// weights support it: graph inputs are staged whole until Compute.
func (t *Tensor) SetRawAt(data []byte, off int) {
	if !t.Contiguous() {
		panicf("set %s: tensor is a non-contiguous view", t)
	}
	if t.ws == nil {
		panicf("set %s at offset: only weight tensors can be written in pieces", t)
	}
	if off < 0 || off+len(data) > t.NBytes() {
		panicf("set %s: bytes [%d, %d) outside the tensor's %d", t, off, off+len(data), t.NBytes())
	}
	if len(data) == 0 {
		return
	}
	t.ws.uploadAt(t, data, off)
}

// F32 returns the computed contents as float32 in ggml order (f16, bf16,
// q8_0 and q4_K are converted). It panics if the tensor is not readable:
// not marked with Graph.Output, or overwritten by a later Compute.
func (t *Tensor) F32() []float32 {
	raw := t.Raw()
	switch t.dt {
	case F32:
		return bytesF32(raw)
	case I32:
		out := make([]float32, len(raw)/4)
		for i := range out {
			out[i] = float32(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		}
		return out
	default:
		return Dequantize(t.dt, raw, t.Elements())
	}
}

// Raw returns the computed contents as bytes in the tensor's storage format.
func (t *Tensor) Raw() []byte {
	out := make([]byte, t.NBytes())
	t.RawInto(out)
	return out
}

// RawInto reads the contents into dst (exactly NBytes long) without an
// intermediate buffer; the same rules as Raw apply.
func (t *Tensor) RawInto(dst []byte) {
	if t.g != nil {
		// hold the backend so no other Compute can reuse the buffers mid-read
		t.g.b.mu.Lock()
		defer t.g.b.mu.Unlock()
		t.g.checkReadable(t)
	} else if t.ws != nil {
		t.ws.checkReadable(t)
	}
	if !t.Contiguous() {
		panicf("read %s: tensor is a non-contiguous view; read a Cont of it", t)
	}
	if len(dst) != t.NBytes() {
		panicf("read %s: got a %d-byte destination, want %d", t, len(dst), t.NBytes())
	}
	cTensorGet(t.h, dst, 0)
}

// F32Into reads an f32 tensor's contents into dst (exactly Elements long)
// with one copy: what a loop of large reads (a prefill's rows) wants.
func (t *Tensor) F32Into(dst []float32) {
	if t.dt != F32 {
		panicf("F32Into %s: only f32 tensors (use F32)", t)
	}
	if len(dst) != t.Elements() {
		panicf("F32Into %s: got %d values, want %d", t, len(dst), t.Elements())
	}
	if !littleEndian {
		copy(dst, t.F32())
		return
	}
	t.RawInto(f32View(dst))
}

// littleEndian is true on every host ggml runs on here (arm64, amd64): ggml
// stores f32 in host order, so float slices and tensor bytes convert with
// one memmove instead of a per-element loop (a 10k-token prefill moves
// gigabytes of rows; the loop ran at ~1 GB/s).
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// f32View is v's memory as bytes (little-endian hosts only).
func f32View(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
}

func f32Bytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	if littleEndian {
		copy(out, f32View(v))
		return out
	}
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

func bytesF32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	if littleEndian {
		copy(f32View(out), b)
		return out
	}
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func u16Bytes(v []uint16) []byte {
	out := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(out[2*i:], x)
	}
	return out
}

func bytesU16(b []byte) []uint16 {
	out := make([]uint16, len(b)/2)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out
}
