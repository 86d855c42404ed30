package tokenizer

import (
	"unicode/utf8"
)

// Byte-level BPE writes its vocabulary in a printable alphabet: bytes that
// are printable Latin-1 stand for themselves, and the other 68 bytes map, in
// byte order, to U+0100 onwards (so a space is "Ġ", U+0120, and a newline
// "Ċ"). This is GPT-2's table, which HF's ByteLevel pre-tokenizer and
// decoder use.
var (
	byteToRune [256]rune
	runeToByte = map[rune]byte{}
)

func init() {
	n := rune(0)
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			byteToRune[b] = rune(b)
		} else {
			byteToRune[b] = 256 + n
			n++
		}
		runeToByte[byteToRune[b]] = byte(b)
	}
}

// byteLevelString maps raw bytes to the printable alphabet.
func byteLevelString(b []byte) string {
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = utf8.AppendRune(out, byteToRune[c])
	}
	return string(out)
}

// appendTokenBytes appends the raw bytes a vocabulary token stands for. As in
// HF's ByteLevel decoder, a token with any rune outside the alphabet (an
// added token such as "<d>" is inside it, but one written in CJK is not)
// contributes its own UTF-8 bytes unchanged.
func appendTokenBytes(dst []byte, tok string) []byte {
	start := len(dst)
	for _, r := range tok {
		b, ok := runeToByte[r]
		if !ok {
			return append(dst[:start], tok...)
		}
		dst = append(dst, b)
	}
	return dst
}

// lossyUTF8 converts b to a string the way Rust's String::from_utf8_lossy
// and the WHATWG decoder do: each maximal subpart of an ill-formed sequence
// becomes one U+FFFD. Go's own conversions differ (one U+FFFD per byte, or
// one per run), and HF's decode uses Rust's.
func lossyUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError || n > 1 {
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		out = utf8.AppendRune(out, utf8.RuneError)
		i += maximalSubpart(b[i:])
	}
	return string(out)
}

// maximalSubpart returns the length of the longest prefix of b (at least 1)
// that starts a well-formed UTF-8 sequence, for b not starting with one.
func maximalSubpart(b []byte) int {
	c := b[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(b); k++ {
		if b[n] < lo || b[n] > hi {
			break
		}
		lo, hi = 0x80, 0xBF
		n++
	}
	return n
}
