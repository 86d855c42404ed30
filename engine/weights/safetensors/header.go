// Package safetensors reads and writes the safetensors checkpoint format
// (a little-endian u64 header length, a JSON header, then one contiguous
// data section) with the strict validation of the format's reference
// implementation, memory-maps files for zero-copy tensor access, and
// resolves sharded snapshots through model.safetensors.index.json.
//
// Every size is checked in 64-bit arithmetic with overflow guards, and the
// header must describe the data section exactly (contiguous, no holes, no
// overlaps, no trailing bytes), so that nothing a hostile file says can make
// a reader index past the mapping or allocate from an untrusted shape.
package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"unicode/utf8"
)

// MaxHeaderSize caps the JSON header, as the reference implementation does.
const MaxHeaderSize = 100 << 20

// FormatError reports a file that breaks the format. Tensor is empty when
// the fault is not tied to one tensor.
type FormatError struct {
	Path   string
	Tensor string
	Msg    string
}

func (e *FormatError) Error() string {
	s := "safetensors: invalid format"
	if e.Path != "" {
		s += " in " + e.Path
	}
	if e.Tensor != "" {
		s += ": tensor " + e.Tensor
	}
	return s + ": " + e.Msg
}

// TensorInfo describes one tensor. Begin and End are byte offsets relative
// to the start of the data section.
type TensorInfo struct {
	Name  string
	DType DType
	Shape []int64
	Begin int64
	End   int64
}

// Elements is the product of the shape (1 for a scalar).
func (t TensorInfo) Elements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Bytes is the tensor's size in the data section.
func (t TensorInfo) Bytes() int64 { return t.End - t.Begin }

// Header is a validated safetensors header.
type Header struct {
	// Tensors in data-section order.
	Tensors []TensorInfo
	// Metadata is the optional __metadata__ string map (nil when absent).
	Metadata map[string]string
	// DataOffset is the absolute file offset of the data section: 8 plus
	// the header length. The official MiniMax-H3 shards have it at 8 mod 16.
	DataOffset int64
	// DataSize is the data section's length.
	DataSize int64
}

// ReadHeaderLength decodes the 8-byte prefix and checks it against the cap
// and the file size.
func ReadHeaderLength(prefix []byte, fileSize int64) (int64, error) {
	if len(prefix) < 8 || fileSize < 8 {
		return 0, &FormatError{Msg: fmt.Sprintf("file is %d bytes, shorter than the 8-byte header length", fileSize)}
	}
	n := binary.LittleEndian.Uint64(prefix)
	if n > MaxHeaderSize {
		return 0, &FormatError{Msg: fmt.Sprintf("header length %d exceeds the %d-byte cap", n, MaxHeaderSize)}
	}
	if int64(n) > fileSize-8 {
		return 0, &FormatError{Msg: fmt.Sprintf("header length %d runs past the end of a %d-byte file", n, fileSize)}
	}
	return int64(n), nil
}

// ParseHeader validates the JSON header json (the bytes after the length
// prefix) for a file of fileSize bytes.
func ParseHeader(js []byte, fileSize int64) (*Header, error) {
	h := &Header{DataOffset: 8 + int64(len(js))}
	if h.DataOffset > fileSize {
		return nil, &FormatError{Msg: "header runs past the end of the file"}
	}
	h.DataSize = fileSize - h.DataOffset
	if !utf8.Valid(js) {
		return nil, &FormatError{Msg: "header is not valid UTF-8"}
	}
	// The reference writer pads the JSON with trailing spaces; leading
	// whitespace is not allowed.
	if len(js) == 0 || js[0] != '{' {
		return nil, &FormatError{Msg: "header does not start with '{'"}
	}
	if err := walkHeader(js, h); err != nil {
		return nil, err
	}
	return h, validateLayout(h)
}

// walkHeader decodes the top-level object token by token so that duplicate
// keys, which encoding/json would silently merge, are refused.
func walkHeader(js []byte, h *Header) error {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return &FormatError{Msg: "header is not JSON: " + err.Error()}
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return &FormatError{Msg: "header is not JSON: " + err.Error()}
		}
		name, _ := tok.(string)
		if seen[name] {
			return &FormatError{Tensor: name, Msg: "duplicate key in header"}
		}
		seen[name] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return &FormatError{Tensor: name, Msg: "header is not JSON: " + err.Error()}
		}
		if name == "__metadata__" {
			if err := parseMetadata(raw, h); err != nil {
				return err
			}
			continue
		}
		ti, err := parseTensor(name, raw)
		if err != nil {
			return err
		}
		h.Tensors = append(h.Tensors, ti)
	}
	if _, err := dec.Token(); err != nil {
		return &FormatError{Msg: "header is not JSON: " + err.Error()}
	}
	if rest := bytes.TrimRight(js[dec.InputOffset():], " "); len(rest) != 0 {
		return &FormatError{Msg: "trailing bytes after the header's JSON object"}
	}
	return nil
}

func parseMetadata(raw json.RawMessage, h *Header) error {
	keys, err := objectKeys(raw)
	if err != nil {
		return &FormatError{Tensor: "__metadata__", Msg: err.Error()}
	}
	m := map[string]string{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return &FormatError{Tensor: "__metadata__", Msg: "must map strings to strings"}
	}
	if len(m) != keys {
		return &FormatError{Tensor: "__metadata__", Msg: "duplicate key"}
	}
	h.Metadata = m
	return nil
}

// objectKeys counts the keys of a JSON object, duplicates included.
func objectKeys(raw []byte) (int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, fmt.Errorf("not a JSON object")
	}
	n := 0
	for dec.More() {
		if _, err := dec.Token(); err != nil {
			return 0, err
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

type tensorJSON struct {
	DType       *string  `json:"dtype"`
	Shape       []uint64 `json:"shape"`
	DataOffsets []uint64 `json:"data_offsets"`
}

func parseTensor(name string, raw []byte) (TensorInfo, error) {
	bad := func(msg string, a ...any) (TensorInfo, error) {
		return TensorInfo{}, &FormatError{Tensor: name, Msg: fmt.Sprintf(msg, a...)}
	}
	keys, err := objectKeys(raw)
	if err != nil {
		return bad("entry is not an object")
	}
	var tj tensorJSON
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&tj); err != nil {
		return bad("entry is malformed: %v", err)
	}
	if keys != 3 || tj.DType == nil || tj.Shape == nil || tj.DataOffsets == nil {
		return bad("entry needs exactly dtype, shape and data_offsets")
	}
	dt := DType(*tj.DType)
	if !dt.Valid() {
		return bad("unknown dtype %q", *tj.DType)
	}
	if len(tj.DataOffsets) != 2 {
		return bad("data_offsets has %d values, want 2", len(tj.DataOffsets))
	}
	begin, end := tj.DataOffsets[0], tj.DataOffsets[1]
	if begin > end || end > math.MaxInt64 {
		return bad("data_offsets [%d, %d] are not an increasing pair", begin, end)
	}
	n := uint64(dt.Size())
	shape := make([]int64, len(tj.Shape))
	for i, d := range tj.Shape {
		hi, lo := bits.Mul64(n, d)
		if hi != 0 || lo > math.MaxInt64 {
			return bad("shape %v overflows 64 bits", tj.Shape)
		}
		n = lo
		shape[i] = int64(d)
	}
	if n != end-begin {
		return bad("shape %v of %s needs %d bytes, data_offsets [%d, %d] give %d", tj.Shape, dt, n, begin, end, end-begin)
	}
	return TensorInfo{Name: name, DType: dt, Shape: shape, Begin: int64(begin), End: int64(end)}, nil
}

// validateLayout checks that the tensors tile the data section exactly.
func validateLayout(h *Header) error {
	sort.SliceStable(h.Tensors, func(i, j int) bool {
		a, b := h.Tensors[i], h.Tensors[j]
		if a.Begin != b.Begin {
			return a.Begin < b.Begin
		}
		return a.End < b.End
	})
	var pos int64
	for _, t := range h.Tensors {
		switch {
		case t.Begin < pos:
			return &FormatError{Tensor: t.Name, Msg: fmt.Sprintf("bytes [%d, %d] overlap the previous tensor", t.Begin, t.End)}
		case t.Begin > pos:
			return &FormatError{Tensor: t.Name, Msg: fmt.Sprintf("hole in the data section before offset %d", t.Begin)}
		}
		pos = t.End
	}
	if pos != h.DataSize {
		return &FormatError{Msg: fmt.Sprintf("tensors cover %d bytes but the data section holds %d", pos, h.DataSize)}
	}
	return nil
}
