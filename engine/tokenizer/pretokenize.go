package tokenizer

import (
	"unicode"
	"unicode/utf8"
)

// splitFunc appends the pieces of s to dst. Pieces are substrings of s that
// cover it exactly, in order (HF's "Isolated" split behavior).
type splitFunc func(s string, dst []string) []string

// Go's regexp has no lookahead, and both patterns end in \s+(?!\S), so the
// two byte-level BPE split patterns in use are matched by hand below. Each
// follows the backtracking (Oniguruma) semantics HF tokenizers uses:
// alternatives are tried in order at each position and the first that
// matches wins, quantifiers are greedy and give back characters only when
// what follows fails.
const (
	patternQwen2 = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	patternGPT2  = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`
)

var knownPatterns = map[string]splitFunc{
	patternQwen2: splitQwen2,
	patternGPT2:  splitGPT2,
}

// isSpace is Oniguruma's Unicode \s: U+0009..U+000D, U+0085 and the Zs, Zl,
// Zp categories. It differs from JavaScript's \s (which adds U+FEFF and
// lacks U+0085) and from Go regexp's ASCII-only \s.
func isSpace(r rune) bool {
	switch {
	case r == ' ' || (r >= '\t' && r <= '\r') || r == 0x85:
		return true
	case r < 0x80:
		return false
	}
	return unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp)
}

func isLetter(r rune) bool {
	if r < 0x80 {
		return (r|0x20) >= 'a' && (r|0x20) <= 'z'
	}
	return unicode.IsLetter(r)
}

func isNumber(r rune) bool {
	if r < 0x80 {
		return r >= '0' && r <= '9'
	}
	return unicode.IsNumber(r)
}

// isOther is [^\s\p{L}\p{N}]. An invalid UTF-8 byte decodes as a one-byte
// U+FFFD, which is a symbol and so lands here too.
func isOther(r rune) bool { return !isSpace(r) && !isLetter(r) && !isNumber(r) }

func isCRLF(r rune) bool { return r == '\r' || r == '\n' }

// at decodes the rune at byte offset i; at the end of s it returns size 0.
func at(s string, i int) (rune, int) {
	if i >= len(s) {
		return -1, 0
	}
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(s[i:])
}

// skip advances from i over runes satisfying class.
func skip(s string, i int, class func(rune) bool) int {
	for {
		r, n := at(s, i)
		if n == 0 || !class(r) {
			return i
		}
		i += n
	}
}

// contraction matches 's 't 're 've 'm 'll 'd after the apostrophe at i. With
// foldCase, letters match case-insensitively under Unicode simple case
// folding, where U+017F (long s) folds to s.
func contraction(s string, i int, foldCase bool) int {
	j := i + 1 // past the apostrophe
	lower := func(k int) (rune, int) {
		r, n := at(s, k)
		if foldCase {
			switch {
			case r >= 'A' && r <= 'Z':
				r += 'a' - 'A'
			case r == 0x17F:
				r = 's'
			}
		}
		return r, n
	}
	r, n := lower(j)
	switch r {
	case 's', 't', 'm', 'd':
		return j + n
	case 'r', 'v', 'l':
		want := rune('e')
		if r == 'l' {
			want = 'l'
		}
		if r2, n2 := lower(j + n); r2 == want {
			return j + n + n2
		}
	}
	return -1
}

// spaceRun handles the trailing \s alternatives of both patterns at i, where
// s[i] is whitespace. withNewlines adds Qwen2's \s*[\r\n]+ ahead of
// \s+(?!\S) and \s+.
func spaceRun(s string, i int, withNewlines bool) int {
	end := skip(s, i, isSpace)
	if withNewlines {
		// \s* backs off to the last CR/LF of the run; [\r\n]+ then takes it
		// (the run holds no CR/LF after it).
		last := -1
		for k := i; k < end; {
			r, n := at(s, k)
			if isCRLF(r) {
				last = k + n
			}
			k += n
		}
		if last > 0 {
			return last
		}
	}
	if end == len(s) {
		return end
	}
	// \s+(?!\S): give back the last space so that a non-space follows no
	// match; with a single space \s+ takes it anyway.
	_, lastSize := utf8.DecodeLastRuneInString(s[i:end])
	if end-lastSize > i {
		return end - lastSize
	}
	return end
}

// matchQwen2 returns the end of the Qwen2 pattern's match starting at i.
// Every rune is a letter, a number, a space or "other", so some
// alternative always matches and the pieces tile the input.
func matchQwen2(s string, i int) int {
	r, n := at(s, i)
	if r == '\'' {
		if e := contraction(s, i, true); e > 0 {
			return e
		}
	}
	// [^\r\n\p{L}\p{N}]?\p{L}+
	if isLetter(r) {
		return skip(s, i+n, isLetter)
	}
	if !isCRLF(r) && !isNumber(r) {
		if r2, n2 := at(s, i+n); n2 > 0 && isLetter(r2) {
			return skip(s, i+n+n2, isLetter)
		}
	}
	// \p{N}
	if isNumber(r) {
		return i + n
	}
	// ' ?[^\s\p{L}\p{N}]+[\r\n]*'
	start := i
	if r == ' ' {
		if r2, n2 := at(s, i+n); n2 > 0 && isOther(r2) {
			start = i + n
		}
	}
	if r2, n2 := at(s, start); n2 > 0 && isOther(r2) {
		return skip(s, skip(s, start, isOther), isCRLF)
	}
	return spaceRun(s, i, true)
}

// matchGPT2 returns the end of the GPT-2 pattern's match starting at i.
func matchGPT2(s string, i int) int {
	r, n := at(s, i)
	if r == '\'' {
		if e := contraction(s, i, false); e > 0 {
			return e
		}
	}
	// ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+' share the optional space.
	start := i
	if r == ' ' {
		if _, n2 := at(s, i+n); n2 > 0 {
			start = i + n
		}
	}
	for _, class := range []func(rune) bool{isLetter, isNumber, isOther} {
		// Without the optional space the class would have to match the
		// space at i, which none of them accepts.
		if r2, n2 := at(s, start); n2 > 0 && class(r2) {
			return skip(s, start, class)
		}
	}
	return spaceRun(s, i, false)
}

func splitWith(match func(string, int) int) splitFunc {
	return func(s string, dst []string) []string {
		for i := 0; i < len(s); {
			e := match(s, i)
			dst = append(dst, s[i:e])
			i = e
		}
		return dst
	}
}

var (
	splitQwen2 = splitWith(matchQwen2)
	splitGPT2  = splitWith(matchGPT2)
)

// prefixSpace is ByteLevel's add_prefix_space: a space before every piece
// that does not already start with one.
func prefixSpace(s string, dst []string) []string {
	if len(s) > 0 && s[0] != ' ' {
		s = " " + s
	}
	return append(dst, s)
}
