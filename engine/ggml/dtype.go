package ggml

import "fmt"

// DType is the element type of a tensor. The values are ggml's enum
// ggml_type values (checked against the C headers at compile time).
type DType int

// The element types H3 uses. Q8_0 and Q4_K are block-quantized: a row of n
// elements is n/BlockSize() blocks of BlockBytes() bytes.
const (
	F32  DType = 0
	F16  DType = 1
	Q8_0 DType = 8
	Q4_K DType = 12
	I32  DType = 26
	BF16 DType = 30
)

var dtypeInfo = map[DType]struct {
	name       string
	block      int
	blockBytes int
}{
	F32:  {"f32", 1, 4},
	F16:  {"f16", 1, 2},
	BF16: {"bf16", 1, 2},
	Q8_0: {"q8_0", 32, 34},
	Q4_K: {"q4_K", 256, 144},
	I32:  {"i32", 1, 4},
}

// DTypes lists every supported DType.
var DTypes = []DType{F32, F16, BF16, Q8_0, Q4_K, I32}

// Valid reports whether d is one of the supported types.
func (d DType) Valid() bool { _, ok := dtypeInfo[d]; return ok }

// String returns ggml's name of the type ("f32", "bf16", "q8_0", ...).
func (d DType) String() string {
	if i, ok := dtypeInfo[d]; ok {
		return i.name
	}
	return fmt.Sprintf("dtype(%d)", int(d))
}

// ParseDType maps a ggml type name (as printed by String) back to a DType.
func ParseDType(s string) (DType, error) {
	for _, d := range DTypes {
		if d.String() == s {
			return d, nil
		}
	}
	return 0, fmt.Errorf("ggml: unknown dtype %q (want f32, f16, bf16, q8_0, q4_K or i32)", s)
}

// BlockSize is the number of elements per block (1 for plain types).
func (d DType) BlockSize() int { return d.info().block }

// BlockBytes is the size in bytes of one block (the element size for plain types).
func (d DType) BlockBytes() int { return d.info().blockBytes }

// Quantized reports whether d is a block-quantized type.
func (d DType) Quantized() bool { return d.info().block > 1 }

// RowBytes is the byte size of a row of n elements. It panics if n is not a
// multiple of the block size, which ggml cannot represent.
func (d DType) RowBytes(n int) int {
	i := d.info()
	if n%i.block != 0 {
		panic(fmt.Sprintf("ggml: a %s row needs a multiple of %d elements, got %d", d, i.block, n))
	}
	return n / i.block * i.blockBytes
}

func (d DType) info() struct {
	name       string
	block      int
	blockBytes int
} {
	i, ok := dtypeInfo[d]
	if !ok {
		panic(fmt.Sprintf("ggml: unsupported dtype %d", int(d)))
	}
	return i
}
