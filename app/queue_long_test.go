//go:build long

package app

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"h3studio/engine/weights"
)

// queueRenders is the done-when queue length.
const queueRenders = 20

// rssGrowthLimit is how much resident memory may grow from the third
// render to the last: the first renders open the engine and fill caches,
// later ones must reuse what those left.
const rssGrowthLimit = 1.10

// queueCanvas is large enough that a render's buffers dwarf the process's
// fixed overhead, small enough that 20 renders take minutes on 2 cores.
const queueCanvas = 128

// The done-when: a queue of 20 renders runs back to back with
// resident memory flat after the third (at most +10 %). The jobs go
// through the window's path (Queue over Renderer.Render with step
// previews, each recorded in a history), each with its own seed and
// output, on the tiny model at queueCanvas pixels square.
func TestLongQueueMemoryFlat(t *testing.T) {
	rd := newRenderer(t)
	rd.Preview = true
	hist, err := OpenHistory(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	ended := map[string]JobEvent{}
	finished := make(chan string, queueRenders)
	q := NewQueue(hist, rd.Render, func(ev JobEvent) {
		if ev.Event == nil && (ev.Status == StatusDone || ev.Status == StatusFailed || ev.Status == StatusCanceled) {
			mu.Lock()
			ended[ev.JobID] = ev
			mu.Unlock()
			finished <- ev.JobID
		}
	})
	t.Cleanup(q.Close)
	for i := range queueRenders {
		r := tinyRequest(t, fmt.Sprintf("queue-%02d.mp4", i+1))
		r.Seed = int64(100 + i)
		r.Width, r.Height = queueCanvas, queueCanvas
		if _, err := q.Submit(r); err != nil {
			t.Fatal(err)
		}
	}
	rss := make([]int64, queueRenders)
	t0 := time.Now()
	for i := range queueRenders {
		var id string
		select {
		case id = <-finished:
		case <-time.After(5 * time.Minute):
			t.Fatalf("render %d did not finish within 5 minutes", i+1)
		}
		mu.Lock()
		ev := ended[id]
		mu.Unlock()
		if ev.Status != StatusDone {
			t.Fatalf("render %d (%s) ended %s: %v", i+1, id, ev.Status, ev.Err)
		}
		m := memStat(t)
		rss[i] = m.RSSAnon + m.RSSFile
		var gm runtime.MemStats
		runtime.ReadMemStats(&gm)
		fmt.Printf("render %2d done at %6.1f s: RSS %7.1f MB (anonymous %.1f, files %.1f; Go heap %.1f in use, %.1f held)\n",
			i+1, time.Since(t0).Seconds(), mb(rss[i]), mb(m.RSSAnon), mb(m.RSSFile), mb(int64(gm.HeapInuse)), mb(int64(gm.HeapSys-gm.HeapReleased)))
	}
	growth := float64(rss[queueRenders-1]) / float64(rss[2])
	fmt.Printf("RSS after render 3: %.1f MB, after render %d: %.1f MB (%+.1f %%)\n",
		mb(rss[2]), queueRenders, mb(rss[queueRenders-1]), 100*(growth-1))
	if growth > rssGrowthLimit {
		t.Errorf("resident memory grew %.1f %% from render 3 to render %d, over the %.0f %% allowed",
			100*(growth-1), queueRenders, 100*(rssGrowthLimit-1))
	}
}

// memStat is the process's resident set (VmRSS is its anonymous plus
// file-backed pages).
func memStat(t *testing.T) weights.MemStat {
	m, ok := weights.ReadMemStat()
	if !ok {
		t.Skip("resident memory is read from /proc/self/status (Linux only)")
	}
	return m
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
