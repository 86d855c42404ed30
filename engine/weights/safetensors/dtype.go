package safetensors

import (
	"encoding/binary"
	"fmt"
	"math"
)

// DType is a safetensors element type, spelled as in the header.
type DType string

// The element types of the safetensors format.
const (
	BOOL    DType = "BOOL"
	U8      DType = "U8"
	I8      DType = "I8"
	F8E5M2  DType = "F8_E5M2"
	F8E4M3  DType = "F8_E4M3"
	I16     DType = "I16"
	U16     DType = "U16"
	F16     DType = "F16"
	BF16    DType = "BF16"
	I32     DType = "I32"
	U32     DType = "U32"
	F32     DType = "F32"
	F64     DType = "F64"
	I64     DType = "I64"
	U64     DType = "U64"
	invalid DType = ""
)

var dtypeSizes = map[DType]int64{
	BOOL: 1, U8: 1, I8: 1, F8E5M2: 1, F8E4M3: 1,
	I16: 2, U16: 2, F16: 2, BF16: 2,
	I32: 4, U32: 4, F32: 4,
	F64: 8, I64: 8, U64: 8,
}

// Size is the number of bytes of one element, 0 for an unknown type.
func (d DType) Size() int64 { return dtypeSizes[d] }

// Valid reports whether d is one of the format's element types.
func (d DType) Valid() bool { return dtypeSizes[d] != 0 }

// BF16ToF32 widens a bfloat16 bit pattern; exact.
func BF16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// F32ToBF16 rounds to nearest even, as torch does; NaN stays NaN.
func F32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// F16ToF32 widens an IEEE half bit pattern, subnormals included; exact.
func F16ToF32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	man := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0 && man == 0:
		return math.Float32frombits(sign)
	case exp == 0:
		// Subnormal: renormalise so the leading one is implicit.
		e := uint32(127 - 15 + 1)
		for man&0x400 == 0 {
			man <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (man&0x3ff)<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | man<<13)
}

// F32ToF16 rounds to nearest even with overflow to infinity and gradual
// underflow, matching numpy's float16 cast.
func F32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xff
	man := b & 0x7fffff
	if exp == 0xff {
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	}
	e := exp - 127 + 15
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		man |= 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		rest := man & (1<<shift - 1)
		out := man >> shift
		if rest > half || (rest == half && out&1 == 1) {
			out++
		}
		return sign | uint16(out)
	}
	out := uint32(e)<<10 | man>>13
	rest := man & 0x1fff
	if rest > 0x1000 || (rest == 0x1000 && out&1 == 1) {
		out++ // a carry into the exponent is the correct rounding
	}
	return sign | uint16(out)
}

// ToFloat32 converts little-endian elements of a floating type to float32.
func ToFloat32(dt DType, raw []byte) ([]float32, error) {
	n := int64(len(raw))
	if dt.Size() == 0 || n%dt.Size() != 0 {
		return nil, fmt.Errorf("safetensors: %d bytes is not a whole number of %s elements", n, dt)
	}
	out := make([]float32, n/dt.Size())
	switch dt {
	case F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case BF16:
		for i := range out {
			out[i] = BF16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case F16:
		for i := range out {
			out[i] = F16ToF32(binary.LittleEndian.Uint16(raw[2*i:]))
		}
	case F64:
		for i := range out {
			out[i] = float32(math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:])))
		}
	default:
		return nil, fmt.Errorf("safetensors: cannot convert %s to float32", dt)
	}
	return out, nil
}

// FromFloat32 encodes values as little-endian elements of dt (F32, BF16, F16).
func FromFloat32(dt DType, v []float32) ([]byte, error) {
	out := make([]byte, int64(len(v))*dt.Size())
	switch dt {
	case F32:
		for i, x := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
	case BF16:
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], F32ToBF16(x))
		}
	case F16:
		for i, x := range v {
			binary.LittleEndian.PutUint16(out[2*i:], F32ToF16(x))
		}
	default:
		return nil, fmt.Errorf("safetensors: cannot encode float32 as %s", dt)
	}
	return out, nil
}
