package ggml

import "math"

// Quantize converts rows of rowLen float32 values to dt's storage format:
// q8_0 or q4_K through ggml_quantize_chunk (what `h3studio convert` writes),
// or f16/bf16/f32. len(data) must be a multiple of rowLen, and rowLen a
// multiple of dt's block size (32 for q8_0, 256 for q4_K).
func Quantize(dt DType, data []float32, rowLen int) []byte {
	if rowLen <= 0 || len(data)%rowLen != 0 {
		panicf("Quantize %s: %d values are not whole rows of %d", dt, len(data), rowLen)
	}
	switch dt {
	case F32:
		return f32Bytes(data)
	case F16:
		return u16Bytes(F32ToF16(data))
	case BF16:
		return u16Bytes(F32ToBF16(data))
	case Q8_0, Q4_K:
	default:
		panicf("Quantize: cannot quantize to %s", dt)
	}
	rb := dt.RowBytes(rowLen)
	if len(data) == 0 {
		return nil
	}
	rows := len(data) / rowLen
	out := make([]byte, rows*rb)
	if n := cQuantize(dt, data, out, rows, rowLen); n != len(out) {
		panicf("Quantize %s: ggml wrote %d bytes, want %d", dt, n, len(out))
	}
	return out
}

// Dequantize converts n values stored in dt's format back to float32.
func Dequantize(dt DType, raw []byte, n int) []float32 {
	if n == 0 {
		return nil
	}
	if want := dt.RowBytes(n); len(raw) != want {
		panicf("Dequantize %s: got %d bytes for %d values, want %d", dt, len(raw), n, want)
	}
	switch dt {
	case F32:
		return bytesF32(raw)
	case F16:
		return F16ToF32(bytesU16(raw))
	case BF16:
		return BF16ToF32(bytesU16(raw))
	case I32:
		panicf("Dequantize: i32 is not a float type")
	}
	out := make([]float32, n)
	cToFloat(dt, raw, out)
	return out
}

// F32ToBF16 rounds to bfloat16 (round to nearest even; NaN stays NaN), bit
// for bit as ggml_fp32_to_bf16 does.
func F32ToBF16(v []float32) []uint16 {
	out := make([]uint16, len(v))
	for i, x := range v {
		u := math.Float32bits(x)
		if u&0x7fffffff > 0x7f800000 {
			out[i] = uint16(u>>16) | 64
			continue
		}
		out[i] = uint16((u + 0x7fff + (u>>16)&1) >> 16)
	}
	return out
}

// BF16ToF32 widens bfloat16 values.
func BF16ToF32(v []uint16) []float32 {
	out := make([]float32, len(v))
	for i, h := range v {
		out[i] = math.Float32frombits(uint32(h) << 16)
	}
	return out
}

// F32ToF16 rounds to IEEE half precision (round to nearest even, overflow
// to infinity, subnormals kept), matching ggml's conversion.
func F32ToF16(v []float32) []uint16 {
	out := make([]uint16, len(v))
	for i, x := range v {
		out[i] = f32ToF16(x)
	}
	return out
}

func f32ToF16(x float32) uint16 {
	u := math.Float32bits(x)
	sign := uint16(u>>16) & 0x8000
	exp := int((u >> 23) & 0xff)
	man := u & 0x7fffff
	switch {
	case exp == 0xff: // inf or nan
		if man != 0 {
			return sign | 0x7e00
		}
		return sign | 0x7c00
	case exp > 142: // >= 2^16: overflow
		return sign | 0x7c00
	case exp >= 113: // normal half
		h := uint32(exp-112)<<10 | man>>13
		rem := man & 0x1fff
		if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
			h++ // may carry into the exponent, up to infinity: correct
		}
		return sign | uint16(h)
	case exp >= 102: // subnormal half
		m := man | 0x800000
		shift := uint(126 - exp) // 14..24
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	default:
		return sign
	}
}

// F16ToF32 widens IEEE half values.
func F16ToF32(v []uint16) []float32 {
	out := make([]float32, len(v))
	for i, h := range v {
		out[i] = f16ToF32(h)
	}
	return out
}

func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	man := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | man<<13)
	case exp == 0:
		if man == 0 {
			return math.Float32frombits(sign)
		}
		f := float32(man) / 1024 / 16384 // man * 2^-24
		if sign != 0 {
			f = -f
		}
		return f
	default:
		return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
	}
}
