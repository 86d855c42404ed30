package weights

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"h3studio/engine/ggml"
	"h3studio/engine/weights/safetensors"
)

// Shard geometry for the memory tests: 16 blocks of 4 x 16 MiB = 1 GiB.
const (
	memBlocks = 16
	memRows   = 8192
	memShard  = memBlocks * 4 * memRows * 1024 * 2
)

// anonSampler records the peak RssAnon while it runs.
type anonSampler struct {
	base, peak atomic.Int64
	stop       chan struct{}
	wg         sync.WaitGroup
}

func startAnonSampler(t *testing.T) *anonSampler {
	runtime.GC()
	m, ok := ReadMemStat()
	if !ok {
		t.Skip("the kernel gives no RssAnon/RssFile split here (not Linux); the memory bound is checked on Linux")
	}
	s := &anonSampler{stop: make(chan struct{})}
	s.base.Store(m.RSSAnon)
	s.peak.Store(m.RSSAnon)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			select {
			case <-s.stop:
				return
			case <-time.After(time.Millisecond):
			}
			if m, ok := ReadMemStat(); ok && m.RSSAnon > s.peak.Load() {
				s.peak.Store(m.RSSAnon)
			}
		}
	}()
	return s
}

// growth stops sampling and returns the peak anonymous growth.
func (s *anonSampler) growth() int64 {
	close(s.stop)
	s.wg.Wait()
	if m, ok := ReadMemStat(); ok && m.RSSAnon > s.peak.Load() {
		s.peak.Store(m.RSSAnon)
	}
	return s.peak.Load() - s.base.Load()
}

func synthShard(t *testing.T, align safetensors.Alignment) Source {
	p := filepath.Join(t.TempDir(), fmt.Sprintf("synth-%d.safetensors", align))
	if err := WriteSynthShard(p, memBlocks, memRows, align); err != nil {
		t.Fatal(err)
	}
	src, err := OpenSafetensors(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func cpuBackend(t *testing.T) *ggml.Backend {
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestStreamUnalignedShardBoundedMemory streams a 1 GiB shard whose data
// section starts at 8 mod 16 (nothing can be mapped) through the two-slot
// streamer: anonymous memory must grow by the two slots, not the shard.
func TestStreamUnalignedShardBoundedMemory(t *testing.T) {
	src := synthShard(t, safetensors.Align8Mod16)
	b := cpuBackend(t)
	prefixes := make([]string, memBlocks)
	for i := range prefixes {
		prefixes[i] = fmt.Sprintf("blocks.%d.", i)
	}
	fileBase, _ := ReadMemStat()
	mem := startAnonSampler(t)
	s, err := NewBlockStreamer(b, src, prefixes, SynthSuffixes, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Prefetch(0)
	for i := 0; i < memBlocks; i++ {
		if i+1 < memBlocks {
			s.Prefetch(i + 1)
		}
		ws, err := s.Wait(i)
		if err != nil {
			t.Fatal(err)
		}
		if id := ws.Get("id").F32(); id[0] != float32(i) {
			t.Fatalf("slot for block %d holds block %v", i, id[0])
		}
	}
	grow := mem.growth()
	if s.Bytes < memShard {
		t.Fatalf("streamed %d bytes, want %d", s.Bytes, memShard)
	}
	bound := int64(2*s.SlotBytes()) + 64<<20
	t.Logf("streamed %d MiB through 2 slots of %d MiB: peak RssAnon growth %d MiB (bound %d MiB)", s.Bytes>>20, s.SlotBytes()>>20, grow>>20, bound>>20)
	if grow > bound {
		t.Fatalf("anonymous memory grew %d MiB while streaming a %d MiB shard; bound %d MiB", grow>>20, memShard>>20, bound>>20)
	}
	// Copied pages are dropped from the mapping, so the file-backed part
	// of the process does not accumulate the shard either.
	if end, _ := ReadMemStat(); end.RSSFile-fileBase.RSSFile > int64(s.SlotBytes()) {
		t.Fatalf("file-backed memory grew %d MiB while streaming; the streamer should release copied pages", (end.RSSFile-fileBase.RSSFile)>>20)
	} else {
		t.Logf("file-backed RSS growth %d MiB", (end.RSSFile-fileBase.RSSFile)>>20)
	}
	ws, _ := s.Wait(memBlocks - 1)
	if v := ws.Get("w3").F32(); v[5] != SynthRowValue(5) || v[1024+7] != SynthRowValue(7) {
		t.Fatalf("streamed matrix values %v %v, want %v %v", v[5], v[1024+7], SynthRowValue(5), SynthRowValue(7))
	}
}

// TestMapAlignedShardNoAnonymousCopy loads a 1 GiB 16-aligned shard as a
// resident module: every matrix is placed over the mapping, so anonymous
// memory must not grow by the shard's size even after every page is read.
func TestMapAlignedShardNoAnonymousCopy(t *testing.T) {
	src := synthShard(t, safetensors.Align16)
	b := cpuBackend(t)
	if !b.Caps().ZeroCopy {
		t.Skip("this backend cannot place weights over host memory")
	}
	m := &SynthModel{Blocks: make([]SynthBlock, memBlocks)}
	mem := startAnonSampler(t)
	mod, err := LoadModule(b, src, m, LoadOptions{Store: func(info TensorInfo) (ggml.DType, error) { return GGMLType(info.DType) }})
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Free()
	var sum byte
	mapping := src.Mapping(src.Files()[0].Path)
	for i := 0; i < len(mapping); i += 4096 {
		sum += mapping[i]
	}
	grow := mem.growth()
	t.Logf("mapped %d MiB zero-copy, copied %d bytes; peak RssAnon growth %d MiB (page sum %d)", mod.Mapped>>20, mod.Copied, grow>>20, sum)
	if mod.Mapped < memShard {
		t.Fatalf("mapped %d bytes zero-copy, want the whole %d", mod.Mapped, memShard)
	}
	if grow > 64<<20 {
		t.Fatalf("anonymous memory grew %d MiB loading a %d MiB aligned shard", grow>>20, memShard>>20)
	}
	if v := m.Blocks[9].W2.F32(); v[3] != SynthRowValue(3) {
		t.Fatalf("mapped value %v, want %v", v[3], SynthRowValue(3))
	}
	if id := m.Blocks[9].ID.F32(); id[0] != 9 {
		t.Fatalf("block 9 id %v", id[0])
	}
}
