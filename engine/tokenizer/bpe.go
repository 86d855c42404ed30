package tokenizer

import (
	"fmt"
	"sync"
)

// Cache bounds, as in HF tokenizers: words of 256 bytes or more are not
// cached, and the cache stops growing at 10,000 words.
const (
	cacheMaxWordLen = 256
	cacheCapacity   = 10000
)

type mergeRule struct{ rank, id int32 }

// bpeModel is HF's BPE model restricted to deterministic encoding (no
// dropout). Words arrive as raw bytes; each byte is one initial symbol, the
// byte-level rune that stands for it.
type bpeModel struct {
	vocab        map[string]int32
	merges       map[uint64]mergeRule // key: left id << 32 | right id
	prefix       string               // continuing_subword_prefix
	suffix       string               // end_of_word_suffix
	unk          int32                // -1: characters outside the vocabulary are dropped
	fuseUnk      bool
	byteFallback bool
	ignoreMerges bool
	// byteID is the id of each byte's one-rune token when no prefix or
	// suffix applies, -1 where the vocabulary lacks it.
	byteID [256]int32

	mu    sync.Mutex
	cache map[string][]int32

	scratch sync.Pool // *mergeScratch
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

func newBPE(m *modelJSON, vocab map[string]int32) (*bpeModel, error) {
	b := &bpeModel{vocab: vocab, unk: -1, fuseUnk: m.FuseUnk, byteFallback: m.ByteFallback,
		ignoreMerges: m.IgnoreMerges, cache: map[string][]int32{}}
	b.scratch.New = func() any { return new(mergeScratch) }
	if m.Dropout != nil && *m.Dropout != 0 {
		return nil, &UnsupportedError{What: fmt.Sprintf("BPE dropout %g (encoding would be random)", *m.Dropout)}
	}
	if m.ContinuingSubwordPrefix != nil {
		b.prefix = *m.ContinuingSubwordPrefix
	}
	if m.EndOfWordSuffix != nil {
		b.suffix = *m.EndOfWordSuffix
	}
	if m.UnkToken != nil {
		id, ok := vocab[*m.UnkToken]
		if !ok {
			return nil, fmt.Errorf("unk_token %q is not in the vocabulary", *m.UnkToken)
		}
		b.unk = id
	}
	for c := range b.byteID {
		b.byteID[c] = -1
		if id, ok := vocab[string(byteToRune[c])]; ok {
			b.byteID[c] = id
		}
	}
	b.merges = make(map[uint64]mergeRule, len(m.Merges))
	for rank, p := range m.Merges {
		left, ok1 := vocab[p[0]]
		right, ok2 := vocab[p[1]]
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("merge %d (%q %q) uses a token that is not in the vocabulary", rank+1, p[0], p[1])
		}
		rightText := p[1]
		if len(b.prefix) <= len(rightText) {
			rightText = rightText[len(b.prefix):]
		}
		id, ok := vocab[p[0]+rightText]
		if !ok {
			return nil, fmt.Errorf("merge %d (%q %q) makes %q, which is not in the vocabulary", rank+1, p[0], p[1], p[0]+rightText)
		}
		// A repeated pair keeps its last rank, as HF's map does.
		b.merges[pairKey(left, right)] = mergeRule{rank: int32(rank), id: id}
	}
	return b, nil
}

// encode appends the ids of one pre-tokenized word (raw bytes) to dst.
func (b *bpeModel) encode(word string, dst []int) []int {
	if len(word) == 0 {
		return dst
	}
	if b.ignoreMerges {
		if id, ok := b.vocab[byteLevelString([]byte(word))]; ok {
			return append(dst, int(id))
		}
	}
	cacheable := len(word) < cacheMaxWordLen
	if cacheable {
		b.mu.Lock()
		ids, ok := b.cache[word]
		b.mu.Unlock()
		if ok {
			for _, id := range ids {
				dst = append(dst, int(id))
			}
			return dst
		}
	}
	sc := b.scratch.Get().(*mergeScratch)
	b.initialSymbols(word, sc)
	sc.mergeAll(b.merges)
	ids := sc.ids()
	b.scratch.Put(sc)
	if cacheable {
		b.mu.Lock()
		if len(b.cache) < cacheCapacity {
			b.cache[word] = ids
		}
		b.mu.Unlock()
	}
	for _, id := range ids {
		dst = append(dst, int(id))
	}
	return dst
}

// initialSymbols splits word into one symbol per byte, following HF's
// merge_word: prefix and suffix decoration, then byte fallback, then the
// unknown token (fused or not), and otherwise the byte is dropped.
func (b *bpeModel) initialSymbols(word string, sc *mergeScratch) {
	sc.reset()
	if b.prefix == "" && b.suffix == "" {
		ok := true
		for i := 0; i < len(word); i++ {
			id := b.byteID[word[i]]
			if id < 0 {
				ok = false
				break
			}
			sc.add(id, 1)
		}
		if ok {
			return
		}
		sc.reset()
	}
	unkID, unkLen := int32(-1), int32(0)
	flushUnk := func() {
		if unkID >= 0 {
			sc.add(unkID, unkLen)
			unkID, unkLen = -1, 0
		}
	}
	for i := 0; i < len(word); i++ {
		s := string(byteToRune[word[i]])
		if i > 0 {
			s = b.prefix + s
		}
		if i == len(word)-1 {
			s += b.suffix
		}
		if id, ok := b.vocab[s]; ok {
			flushUnk()
			sc.add(id, 1)
			continue
		}
		if b.byteFallback && b.addByteFallback(s, sc) {
			continue
		}
		if b.unk < 0 {
			continue
		}
		if unkID >= 0 && b.fuseUnk {
			unkLen++
			continue
		}
		flushUnk()
		unkID, unkLen = b.unk, 1
	}
	flushUnk()
}

// addByteFallback adds the <0xXX> tokens for the UTF-8 bytes of s, if the
// vocabulary has all of them.
func (b *bpeModel) addByteFallback(s string, sc *mergeScratch) bool {
	ids := make([]int32, 0, len(s))
	for i := 0; i < len(s); i++ {
		id, ok := b.vocab[fmt.Sprintf("<0x%02X>", s[i])]
		if !ok {
			return false
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		sc.add(id, 1)
	}
	return true
}

type symbol struct{ id, prev, next, len int32 }

type pendingMerge struct{ rank, pos, id int32 }

func (m pendingMerge) less(o pendingMerge) bool {
	return m.rank < o.rank || (m.rank == o.rank && m.pos < o.pos)
}

// mergeScratch holds one word's symbols (a linked list over a slice) and the
// queue of candidate merges, reused across words.
type mergeScratch struct {
	syms  []symbol
	queue []pendingMerge // binary min-heap on (rank, pos)
}

func (sc *mergeScratch) reset() { sc.syms, sc.queue = sc.syms[:0], sc.queue[:0] }

func (sc *mergeScratch) add(id, n int32) {
	k := int32(len(sc.syms))
	if k > 0 {
		sc.syms[k-1].next = k
	}
	sc.syms = append(sc.syms, symbol{id: id, prev: k - 1, next: -1, len: n})
}

// mergeAll applies merges lowest rank first, leftmost first among equal
// ranks, exactly as HF's Word::merge_all: stale queue entries are skipped by
// checking that the pair still produces the queued id.
func (sc *mergeScratch) mergeAll(merges map[uint64]mergeRule) {
	for i := 0; i+1 < len(sc.syms); i++ {
		if m, ok := merges[pairKey(sc.syms[i].id, sc.syms[i+1].id)]; ok {
			sc.push(pendingMerge{m.rank, int32(i), m.id})
		}
	}
	for len(sc.queue) > 0 {
		top := sc.pop()
		cur := &sc.syms[top.pos]
		if cur.len == 0 || cur.next < 0 {
			continue
		}
		ri := cur.next
		right := sc.syms[ri]
		if m, ok := merges[pairKey(cur.id, right.id)]; !ok || m.id != top.id {
			continue
		}
		cur.id, cur.len, cur.next = top.id, cur.len+right.len, right.next
		sc.syms[ri].len = 0
		if right.next >= 0 {
			sc.syms[right.next].prev = top.pos
		}
		if cur.prev >= 0 {
			if m, ok := merges[pairKey(sc.syms[cur.prev].id, cur.id)]; ok {
				sc.push(pendingMerge{m.rank, cur.prev, m.id})
			}
		}
		if cur.next >= 0 {
			if m, ok := merges[pairKey(cur.id, sc.syms[cur.next].id)]; ok {
				sc.push(pendingMerge{m.rank, top.pos, m.id})
			}
		}
	}
}

func (sc *mergeScratch) ids() []int32 {
	out := make([]int32, 0, len(sc.syms))
	for _, s := range sc.syms {
		if s.len != 0 {
			out = append(out, s.id)
		}
	}
	return out
}

func (sc *mergeScratch) push(m pendingMerge) {
	q := append(sc.queue, m)
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q[i].less(q[p]) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
	sc.queue = q
}

func (sc *mergeScratch) pop() pendingMerge {
	q := sc.queue
	top := q[0]
	last := len(q) - 1
	q[0] = q[last]
	q = q[:last]
	for i := 0; ; {
		l, r, min := 2*i+1, 2*i+2, i
		if l < len(q) && q[l].less(q[min]) {
			min = l
		}
		if r < len(q) && q[r].less(q[min]) {
			min = r
		}
		if min == i {
			break
		}
		q[i], q[min] = q[min], q[i]
		i = min
	}
	sc.queue = q
	return top
}
