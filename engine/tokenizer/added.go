package tokenizer

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// AddedToken is an entry of tokenizer.json's added_tokens: a string matched
// in the text before any normalization or pre-tokenization, which always
// encodes to its own id (HF's AddedVocabulary).
type AddedToken struct {
	ID      int
	Content string
	// Special tokens are control tokens such as <|vision_start|>. HF
	// matches special and non-special added tokens alike when encoding.
	Special bool
	// SingleWord: match only where no word character touches either side.
	SingleWord bool
	// LStrip and RStrip: the match absorbs the whitespace on that side.
	LStrip, RStrip bool
	// Normalized: match against the normalized text rather than the raw text.
	Normalized bool
}

// addedMatcher finds added tokens with leftmost-longest semantics (HF uses
// an Aho-Corasick automaton with MatchKind::LeftmostLongest): the match that
// starts first wins, and among those the longest. Added tokens are few and
// mostly share a first byte ('<'), so candidates are indexed by first byte
// and tried longest first.
type addedMatcher struct {
	tokens   []*AddedToken
	patterns []string
	byFirst  [256][]int // indices into tokens, longest pattern first
	n        int        // non-empty patterns
}

func newAddedMatcher(tokens []*AddedToken, pattern func(*AddedToken) string) *addedMatcher {
	m := &addedMatcher{tokens: tokens, patterns: make([]string, len(tokens))}
	for i, t := range tokens {
		p := pattern(t)
		m.patterns[i] = p
		if p == "" {
			continue
		}
		m.byFirst[p[0]] = append(m.byFirst[p[0]], i)
		m.n++
	}
	for _, idx := range m.byFirst {
		// Stable, so the first of two identical patterns wins, as in an
		// automaton built from the list in order.
		slices.SortStableFunc(idx, func(a, b int) int { return len(m.patterns[b]) - len(m.patterns[a]) })
	}
	return m
}

func (m *addedMatcher) empty() bool { return m.n == 0 }

// longestAt returns the token and end of the longest match starting at i.
func (m *addedMatcher) longestAt(s string, i int) (tok, end int) {
	for _, k := range m.byFirst[s[i]] {
		if strings.HasPrefix(s[i:], m.patterns[k]) {
			return k, i + len(m.patterns[k])
		}
	}
	return -1, -1
}

// segment is a piece of the input: an added token (id >= 0) or text to
// tokenize (id < 0).
type segment struct {
	text string
	id   int
}

// split cuts s into text and added-token segments, following HF's
// AddedVocabulary::find_matches: matches are found left to right without
// overlap; a single_word match touching a word character is dropped; lstrip
// and rstrip widen a match over adjacent whitespace.
func (m *addedMatcher) split(s string, dst []segment) []segment {
	if m.empty() {
		return append(dst, segment{text: s, id: -1})
	}
	done := 0 // end of the last emitted segment
	for i := 0; i < len(s); {
		ti, end := m.longestAt(s, i)
		if ti < 0 {
			i++
			continue
		}
		t := m.tokens[ti]
		start, stop := i, end
		i = end
		if t.SingleWord && (endsWithWord(s[:start]) || startsWithWord(s[stop:])) {
			continue
		}
		if t.LStrip {
			start = max(trimRightSpace(s[:start]), done)
		}
		if t.RStrip {
			stop += len(s[stop:]) - len(trimLeftSpace(s[stop:]))
			i = stop
		}
		if done < start {
			dst = append(dst, segment{text: s[done:start], id: -1})
		}
		dst = append(dst, segment{text: s[start:stop], id: t.ID})
		done = stop
	}
	if done < len(s) || len(dst) == 0 {
		dst = append(dst, segment{text: s[done:], id: -1})
	}
	return dst
}

// isWordRune is Rust regex's Unicode \w, which HF uses for single_word:
// Alphabetic, marks, decimal numbers, connector punctuation, joiners.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.Other_Alphabetic, r) ||
		unicode.IsMark(r) || unicode.Is(unicode.Nd, r) || unicode.Is(unicode.Pc, r) || r == 0x200C || r == 0x200D
}

func endsWithWord(s string) bool {
	r, n := utf8.DecodeLastRuneInString(s)
	return n > 0 && isWordRune(r)
}

func startsWithWord(s string) bool {
	r, n := utf8.DecodeRuneInString(s)
	return n > 0 && isWordRune(r)
}

// trimRightSpace returns the offset where s's trailing Unicode White_Space
// starts (Rust regex \s*$).
func trimRightSpace(s string) int {
	for len(s) > 0 {
		r, n := utf8.DecodeLastRuneInString(s)
		if !unicode.Is(unicode.White_Space, r) {
			break
		}
		s = s[:len(s)-n]
	}
	return len(s)
}

func trimLeftSpace(s string) string {
	for len(s) > 0 {
		r, n := utf8.DecodeRuneInString(s)
		if !unicode.Is(unicode.White_Space, r) {
			break
		}
		s = s[n:]
	}
	return s
}

// normForm is one Unicode normalization step of the normalizer section.
type normForm = norm.Form

var normForms = map[string]normForm{
	"NFC":  norm.NFC,
	"NFD":  norm.NFD,
	"NFKC": norm.NFKC,
	"NFKD": norm.NFKD,
}
