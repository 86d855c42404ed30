package weights

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"h3studio/engine/ggml"
)

// BlockStreamer moves repeated blocks of weights (the DiT's 50 blocks)
// from the mapped files into two rotating backend buffers, so at most two
// blocks are resident while the rest stay on disk or in the reclaimable
// page cache (h3.c's --ssd-streaming). Block i lands in slot i%2; the copy
// runs on its own goroutine while the caller computes with the other slot.
//
// Protocol: Prefetch(i+1) once block i-1's graph has finished (its slot is
// being overwritten), then Wait(i) before building block i's graph:
//
//	s.Prefetch(0)
//	for i := range blocks {
//		if i+1 < n { s.Prefetch(i + 1) }   // slot (i+1)%2 held block i-1, done
//		ws, err := s.Wait(i)
//		... bind ws and compute block i ...
//	}
//
// Copies go straight from the mapping into the slot's backend buffer (no
// staging copy); after each tensor its pages are dropped from the process
// mapping, so neither anonymous nor file-backed resident memory grows with
// the number of blocks streamed.
type BlockStreamer struct {
	src      Source
	blocks   [][]TensorInfo
	suffixes []string
	slots    [2]*ggml.WeightSet
	pending  [2]chan error
	inSlot   [2]int
	mu       sync.Mutex
	// Bytes counts the bytes copied so far.
	Bytes int64
}

// NewBlockStreamer prepares streaming of len(prefixes) blocks, block i
// being the tensors prefixes[i]+suffix for every suffix. All blocks must
// have the same shapes and dtypes; store picks the backend dtype (nil:
// matrices as stored, vectors as F32). The slots' tensors are named by
// their suffixes, so Bind(ws, "", &block) fills a block struct.
func NewBlockStreamer(b *ggml.Backend, src Source, prefixes, suffixes []string, store func(TensorInfo) (ggml.DType, error)) (*BlockStreamer, error) {
	if store == nil {
		store = defaultStore
	}
	if len(prefixes) == 0 || len(suffixes) == 0 {
		return nil, fmt.Errorf("weights: block streamer needs at least one block and one tensor")
	}
	s := &BlockStreamer{src: src, suffixes: suffixes, inSlot: [2]int{-1, -1}}
	var errs []error
	for i, p := range prefixes {
		var infos []TensorInfo
		for j, suf := range suffixes {
			info, ok := src.Lookup(p + suf)
			if !ok {
				errs = append(errs, fmt.Errorf("missing %s", p+suf))
				continue
			}
			if i > 0 && len(s.blocks[0]) > j {
				if ref := s.blocks[0][j]; fmt.Sprint(ref.Shape) != fmt.Sprint(info.Shape) || ref.DType != info.DType {
					errs = append(errs, fmt.Errorf("%s is %s %v, block 0 has %s %v", info.Name, info.DType, info.Shape, ref.DType, ref.Shape))
				}
			}
			infos = append(infos, info)
		}
		s.blocks = append(s.blocks, infos)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("weights: block streamer: %w", joinErrs(errs))
	}
	for k := range s.slots {
		ws := b.NewWeightSet(len(suffixes))
		for j, info := range s.blocks[0] {
			dt, err := store(info)
			if err != nil {
				ws.Free()
				s.Close()
				return nil, fmt.Errorf("weights: block streamer: %s: %w", info.Name, err)
			}
			ws.Add(suffixes[j], dt, GGMLShape(info.Shape)...)
		}
		if err := ws.Alloc(); err != nil {
			ws.Free()
			s.Close()
			return nil, fmt.Errorf("weights: block streamer: %w", err)
		}
		s.slots[k] = ws
	}
	return s, nil
}

// SlotBytes is the backend memory one slot holds.
func (s *BlockStreamer) SlotBytes() int { return s.slots[0].Size() }

// Prefetch starts copying block i into slot i%2. The slot's previous
// block must no longer be in use by any graph.
func (s *BlockStreamer) Prefetch(i int) {
	k := i % 2
	if ch := s.pending[k]; ch != nil {
		<-ch // a copy into this slot is still running; let it finish first
	}
	ch := make(chan error, 1)
	s.pending[k] = ch
	s.inSlot[k] = i
	go func() { ch <- s.copyBlock(i, s.slots[k]) }()
}

// Wait blocks until block i is in its slot and returns the slot's weights.
func (s *BlockStreamer) Wait(i int) (*ggml.WeightSet, error) {
	k := i % 2
	if s.inSlot[k] != i {
		return nil, fmt.Errorf("weights: block streamer: block %d was not prefetched (slot holds %d)", i, s.inSlot[k])
	}
	if ch := s.pending[k]; ch != nil {
		err := <-ch
		s.pending[k] = nil
		if err != nil {
			return nil, err
		}
	}
	return s.slots[k], nil
}

func (s *BlockStreamer) copyBlock(i int, ws *ggml.WeightSet) error {
	if i < 0 || i >= len(s.blocks) {
		return fmt.Errorf("weights: block streamer: block %d of %d", i, len(s.blocks))
	}
	for j, info := range s.blocks[i] {
		if err := Upload(ws.Get(s.suffixes[j]), s.src, info); err != nil {
			return fmt.Errorf("weights: stream block %d: %w", i, err)
		}
		releasePages(s.src.Mapping(info.File), info.Offset, info.Bytes)
		s.mu.Lock()
		s.Bytes += info.Bytes
		s.mu.Unlock()
	}
	return nil
}

// Close waits for copies in flight and frees both slots.
func (s *BlockStreamer) Close() {
	for k := range s.slots {
		if ch := s.pending[k]; ch != nil {
			<-ch
			s.pending[k] = nil
		}
		if s.slots[k] != nil {
			s.slots[k].Free()
			s.slots[k] = nil
		}
	}
}

// releasePages drops the whole pages of mapping[off:off+n] from this
// process: the data stays in the page cache (file-backed, reclaimable) and
// faults back in if read again.
func releasePages(mapping []byte, off, n int64) {
	page := int64(os.Getpagesize())
	start := (off + page - 1) / page * page
	end := (off + n) / page * page
	if mapping == nil || end <= start || end > int64(len(mapping)) {
		return
	}
	// Advice is a hint; a failure leaves the pages mapped, which is only
	// less frugal.
	_ = unix.Madvise(mapping[start:end], unix.MADV_DONTNEED)
}

func joinErrs(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	msg := ""
	for i, e := range errs {
		if i > 0 {
			msg += "; "
		}
		msg += e.Error()
	}
	return fmt.Errorf("%s", msg)
}
