//go:build long

package media

import (
	"math/rand"
	"runtime"
	"sort"
	"testing"
	"time"
)

// TestFrameStoreFullClip holds a full 15 s H3 clip (362 frames at
// 768x1344 of detailed test-card video) and checks the memory and
// access-time promises.
func TestFrameStoreFullClip(t *testing.T) {
	const w, h, n = 768, 1344, 362
	tools := testTools(t)
	src := clip(t, t.TempDir(), "full.mp4", w, h, FPS, float64(n)/FPS, 0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	s, err := tools.LoadFrames(testCtx(t), src, FrameStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	load := time.Since(start)
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("loaded %d frames in %v: %.1f MB compressed, heap growth %.1f MB (RGB would be %.1f MB)",
		s.Len(), load, float64(s.Bytes())/1e6, float64(heap)/1e6, float64(n*w*h*3)/1e6)
	if s.Len() != n {
		t.Fatalf("%d frames, want %d", s.Len(), n)
	}
	if s.Bytes() > 300e6 || heap > 300e6 {
		t.Errorf("store takes %d bytes (heap +%d), want under 300 MB", s.Bytes(), heap)
	}
	var times []time.Duration
	for _, i := range rand.New(rand.NewSource(2)).Perm(n) {
		start := time.Now()
		if _, err := s.Frame(i); err != nil {
			t.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
	t.Logf("random access: median %v, slowest %v", times[n/2], times[n-1])
	if times[n/2] > 50*time.Millisecond {
		t.Errorf("median random access %v, want milliseconds", times[n/2])
	}
}
