// Package gguf reads and writes GGUF (version 3) files, the container
// community MiniMax-H3 quantizations ship in: a key-value header, tensor
// descriptors, then an aligned data section. The reader works on a
// read-only memory mapping and checks every count, length and offset
// against the file before using it (the lessons of the llama.cpp GGUF
// overflow CVEs); tensors must lie inside the data section, aligned and
// without overlaps.
package gguf

import (
	"fmt"
)

// Type is a ggml tensor type as stored in GGUF.
type Type uint32

// The tensor types H3 uses.
const (
	F32  Type = 0
	F16  Type = 1
	Q8_0 Type = 8
	Q4_K Type = 12
	BF16 Type = 30
)

var typeInfo = map[Type]struct {
	name        string
	block, size int64
}{
	F32: {"F32", 1, 4}, F16: {"F16", 1, 2}, BF16: {"BF16", 1, 2},
	Q8_0: {"Q8_0", 32, 34}, Q4_K: {"Q4_K", 256, 144},
	// Other ggml block types, sized so files that mix them (a "Q4_K_M"
	// keeps some tensors in Q6_K) can be validated and described; model
	// loading accepts only the five types above.
	2: {"Q4_0", 32, 18}, 3: {"Q4_1", 32, 20}, 6: {"Q5_0", 32, 22}, 7: {"Q5_1", 32, 24},
	9: {"Q8_1", 32, 36}, 10: {"Q2_K", 256, 84}, 11: {"Q3_K", 256, 110}, 13: {"Q5_K", 256, 176},
	14: {"Q6_K", 256, 210}, 15: {"Q8_K", 256, 292}, 24: {"I8", 1, 1}, 25: {"I16", 1, 2},
	26: {"I32", 1, 4}, 27: {"I64", 1, 8}, 28: {"F64", 1, 8},
}

// String is the type's name as package weights spells dtypes.
func (t Type) String() string {
	if i, ok := typeInfo[t]; ok {
		return i.name
	}
	return fmt.Sprintf("type%d", uint32(t))
}

// Known reports whether the reader knows t's block size (and so can
// validate and describe tensors of that type).
func (t Type) Known() bool { _, ok := typeInfo[t]; return ok }

// Supported reports whether H3's models can load t.
func (t Type) Supported() bool {
	switch t {
	case F32, F16, BF16, Q8_0, Q4_K:
		return true
	}
	return false
}

// RowBytes is the storage size of n elements, -1 if n is not whole blocks.
func (t Type) RowBytes(n int64) int64 {
	i := typeInfo[t]
	if i.block == 0 || n%i.block != 0 {
		return -1
	}
	return n / i.block * i.size
}

// ParseType maps a name from String back to a Type.
func ParseType(s string) (Type, bool) {
	for t, i := range typeInfo {
		if i.name == s {
			return t, true
		}
	}
	return 0, false
}

// Value types of GGUF key-value pairs.
const (
	tUint8 uint32 = iota
	tInt8
	tUint16
	tInt16
	tUint32
	tInt32
	tFloat32
	tBool
	tString
	tArray
	tUint64
	tInt64
	tFloat64
)

// DefaultAlignment is GGUF's data alignment when general.alignment is absent.
const DefaultAlignment = 32

// Limits that bound what a header may ask the reader to hold.
const (
	maxTensors   = 1 << 20
	maxKV        = 1 << 16
	maxStringLen = 1 << 26
	maxDims      = 4
)

// FormatError reports a file that breaks the format.
type FormatError struct {
	Path   string
	Tensor string
	Msg    string
}

func (e *FormatError) Error() string {
	s := "gguf: invalid file"
	if e.Path != "" {
		s += " " + e.Path
	}
	if e.Tensor != "" {
		s += ": tensor " + e.Tensor
	}
	return s + ": " + e.Msg
}

// TensorInfo describes one tensor. Dims are in ggml order (ne0 first).
type TensorInfo struct {
	Name   string
	Dims   []int64
	Type   Type
	Offset int64 // relative to the data section
	Bytes  int64
}
