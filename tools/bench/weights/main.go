// Command weights measures how fast a generated multi-GB shard becomes
// usable weights, and what it costs in anonymous memory, for the three
// ways engine/weights can load it: placed zero-copy over the mapping (a
// 16-aligned shard), streamed through two rotating block buffers (an
// 8-mod-16 shard, like the release), and copied whole into backend memory
// (what a resident load of an unaligned shard costs). The reference, in the
// same run and cache state, is a plain sequential read(2) of the file.
//
//	go run ./tools/bench/weights [-gib 4] [-dir /tmp]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
	"h3studio/engine/weights/safetensors"
)

func main() {
	gib := flag.Int("gib", 4, "shard size in GiB (16 blocks of 4 BF16 matrices)")
	dir := flag.String("dir", os.TempDir(), "where to write the two generated shards (removed afterwards)")
	flag.Parse()
	if err := run(*gib, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "bench weights:", err)
		os.Exit(1)
	}
}

const blocks = 16

type result struct {
	mode, cache string
	secs        float64
	anon        int64
}

func run(gib int, dir string) error {
	rows := gib << 30 / (blocks * 4 * 1024 * 2)
	work, err := os.MkdirTemp(dir, "h3-bench-weights")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	aligned := filepath.Join(work, "aligned.safetensors")
	unaligned := filepath.Join(work, "unaligned.safetensors")
	fmt.Printf("writing two %d GiB shards (16 blocks x 4 BF16 [%d, 1024] matrices) in %s ...\n", gib, rows, work)
	for p, a := range map[string]safetensors.Alignment{aligned: safetensors.Align16, unaligned: safetensors.Align8Mod16} {
		if err := weights.WriteSynthShard(p, blocks, rows, a); err != nil {
			return err
		}
	}
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU})
	if err != nil {
		return err
	}
	defer b.Close()
	size := fileSize(aligned)
	var results []result
	for _, cache := range []string{"cold", "warm"} {
		for _, m := range []struct {
			name string
			path string
			fn   func(string) error
		}{
			{"read(2), 8 MiB buffer (reference)", unaligned, readAll},
			{"aligned: zero-copy map + touch", aligned, func(p string) error { return mapAndTouch(b, p) }},
			{"unaligned: stream, 2 block slots", unaligned, func(p string) error { return stream(b, p) }},
			{"unaligned: resident copy", unaligned, func(p string) error { return residentCopy(b, p) }},
		} {
			if cache == "cold" {
				dropCache(m.path)
			} else if err := readAll(m.path); err != nil { // warm the page cache
				return err
			}
			secs, anon, err := measure(func() error { return m.fn(m.path) })
			if err != nil {
				return fmt.Errorf("%s: %w", m.name, err)
			}
			results = append(results, result{m.name, cache, secs, anon})
		}
	}
	fmt.Printf("\nload of a %.1f GiB shard on %s (%d CPUs); GB/s = shard bytes / wall time\n", float64(size)/(1<<30), runtime.GOOS, runtime.NumCPU())
	fmt.Printf("%-36s %-5s %8s %9s %15s\n", "mode", "cache", "GB/s", "x read", "peak anon MiB")
	for i, r := range results {
		ref := results[i/4*4]
		fmt.Printf("%-36s %-5s %8.2f %9.2f %15d\n", r.mode, r.cache, float64(size)/r.secs/1e9, ref.secs/r.secs, r.anon>>20)
	}
	return nil
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

// measure runs fn and returns its wall time and the peak growth of the
// process's anonymous resident memory while it ran.
func measure(fn func() error) (float64, int64, error) {
	runtime.GC()
	base, ok := weights.ReadMemStat()
	var peak atomic.Int64
	peak.Store(base.RSSAnon)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if ok {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
				if m, ok := weights.ReadMemStat(); ok && m.RSSAnon > peak.Load() {
					peak.Store(m.RSSAnon)
				}
			}
		}()
	}
	t0 := time.Now()
	err := fn()
	secs := time.Since(t0).Seconds()
	close(stop)
	wg.Wait()
	if !ok {
		return secs, -1, err
	}
	return secs, peak.Load() - base.RSSAnon, err
}

func readAll(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := make([]byte, 8<<20)
	for {
		_, err := f.Read(buf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func mapAndTouch(b *ggml.Backend, p string) error {
	src, err := weights.OpenSafetensors(p)
	if err != nil {
		return err
	}
	defer src.Close()
	m := &weights.SynthModel{Blocks: make([]weights.SynthBlock, blocks)}
	mod, err := weights.LoadModule(b, src, m, weights.LoadOptions{Store: keep})
	if err != nil {
		return err
	}
	defer mod.Free()
	if mod.Copied != 0 {
		return fmt.Errorf("%d bytes were copied from an aligned shard", mod.Copied)
	}
	// Fault every page in, as a first forward would.
	var sum byte
	mapping := src.Mapping(p)
	for i := 0; i < len(mapping); i += 4096 {
		sum += mapping[i]
	}
	sink.Add(int64(sum))
	return nil
}

// sink keeps the page-touching loop from being optimised away.
var sink atomic.Int64

func stream(b *ggml.Backend, p string) error {
	src, err := weights.OpenSafetensors(p)
	if err != nil {
		return err
	}
	defer src.Close()
	prefixes := make([]string, blocks)
	for i := range prefixes {
		prefixes[i] = fmt.Sprintf("blocks.%d.", i)
	}
	s, err := weights.NewBlockStreamer(b, src, prefixes, weights.SynthSuffixes, keep)
	if err != nil {
		return err
	}
	defer s.Close()
	s.Prefetch(0)
	for i := 0; i < blocks; i++ {
		if i+1 < blocks {
			s.Prefetch(i + 1)
		}
		if _, err := s.Wait(i); err != nil {
			return err
		}
	}
	return nil
}

func residentCopy(b *ggml.Backend, p string) error {
	src, err := weights.OpenSafetensors(p)
	if err != nil {
		return err
	}
	defer src.Close()
	m := &weights.SynthModel{Blocks: make([]weights.SynthBlock, blocks)}
	mod, err := weights.LoadModule(b, src, m, weights.LoadOptions{Store: keep, Copy: true})
	if err != nil {
		return err
	}
	mod.Free()
	return nil
}

func keep(info weights.TensorInfo) (ggml.DType, error) { return weights.GGMLType(info.DType) }
