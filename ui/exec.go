package ui

import (
	"sync"
	"time"
)

// Executor runs widget updates on the UI goroutine. Production uses
// fyne.Do and fyne.DoAndWait; tests plug in a serial executor because
// Fyne's test driver runs fyne.Do inline on the calling goroutine, which
// lets worker goroutines race the test's own widget calls.
type Executor struct {
	Do        func(func())
	DoAndWait func(func())
}

// frameInterval is the display rate the window updates at most: progress
// events can arrive faster (tiny model steps take milliseconds) and every
// refresh costs a repaint.
const frameInterval = time.Second / 60

// coalescer forwards bursts of updates to the UI at most once per
// frameInterval. Ordered updates (status changes) are all delivered, in
// order; "latest" updates (progress, preview) keep only the newest value.
type coalescer struct {
	do func(func())

	mu        sync.Mutex
	ordered   []func()
	latest    map[string]func()
	scheduled bool
	last      time.Time
}

func newCoalescer(do func(func())) *coalescer {
	return &coalescer{do: do, latest: map[string]func(){}}
}

// post queues an update that must not be dropped.
func (c *coalescer) post(f func()) {
	c.mu.Lock()
	c.ordered = append(c.ordered, f)
	now := c.schedule()
	c.mu.Unlock()
	if now {
		c.do(c.flush)
	}
}

// replace queues an update that supersedes any earlier one with the same key.
func (c *coalescer) replace(key string, f func()) {
	c.mu.Lock()
	c.latest[key] = f
	now := c.schedule()
	c.mu.Unlock()
	if now {
		c.do(c.flush)
	}
}

// schedule arranges one flush, no sooner than frameInterval after the
// last, and reports whether the caller must flush now. c.mu is held; the
// caller calls Do only after releasing it, because an executor may run the
// flush inline (Fyne does before the app runs and while it shuts down) and
// flush takes c.mu.
func (c *coalescer) schedule() (now bool) {
	if c.scheduled {
		return false
	}
	c.scheduled = true
	wait := frameInterval - time.Since(c.last)
	if wait <= 0 {
		return true
	}
	time.AfterFunc(wait, func() { c.do(c.flush) })
	return false
}

// flush runs on the UI goroutine.
func (c *coalescer) flush() {
	c.mu.Lock()
	ordered, latest := c.ordered, c.latest
	c.ordered, c.latest = nil, map[string]func(){}
	c.scheduled = false
	c.last = time.Now()
	c.mu.Unlock()
	// Latest-value updates first: a status change queued after a progress
	// event (a job finishing) must win over it.
	for _, f := range latest {
		f()
	}
	for _, f := range ordered {
		f()
	}
}
