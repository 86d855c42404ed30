package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"h3studio/engine"
)

// stepRender is a renderer with the contract RenderFunc states (steps,
// cancel at a step boundary, file written only on success); the model
// itself is exercised by the engine's end-to-end tests.
func stepRender(started chan<- string) RenderFunc {
	return func(ctx context.Context, req Request, sink engine.Sink) (string, error) {
		if started != nil {
			started <- req.Prompt
		}
		for i := 1; i <= 5; i++ {
			select {
			case <-ctx.Done():
				return "", engine.ErrCanceled
			case <-time.After(20 * time.Millisecond):
			}
			sink(engine.Event{Phase: engine.PhaseDenoise, Step: i, Total: 5, Elapsed: time.Duration(i) * time.Millisecond})
		}
		if req.Prompt == "fail" {
			return "", errors.New("engine: the model refused")
		}
		return req.Output, os.WriteFile(req.Output, []byte(req.Prompt), 0o644)
	}
}

type eventLog struct {
	mu  sync.Mutex
	evs []JobEvent
}

func (l *eventLog) add(e JobEvent) { l.mu.Lock(); l.evs = append(l.evs, e); l.mu.Unlock() }

func (l *eventLog) final(id string) JobStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s JobStatus
	for _, e := range l.evs {
		if e.JobID == id {
			s = e.Status
		}
	}
	return s
}

func waitStatus(t *testing.T, h *History, id string, want JobStatus) Entry {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if e, err := h.Get(id); err == nil && e.Status == want {
			return e
		}
		time.Sleep(5 * time.Millisecond)
	}
	e, _ := h.Get(id)
	t.Fatalf("job %s: status %s, want %s", id, e.Status, want)
	return e
}

func TestQueueRunsInOrderCancelsAndRecovers(t *testing.T) {
	dir := t.TempDir()
	h, err := OpenHistory(filepath.Join(dir, "history"))
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 8)
	var log eventLog
	q := NewQueue(h, stepRender(started), log.add)
	defer q.Close()

	out := func(n string) string { return filepath.Join(dir, n+".mp4") }
	a, _ := q.Submit(Request{Prompt: "a", Output: out("a")})
	b, _ := q.Submit(Request{Prompt: "b", Output: out("b")})
	c, _ := q.Submit(Request{Prompt: "fail", Output: out("c")})
	d, _ := q.Submit(Request{Prompt: "d", Output: out("d")})
	if got := <-started; got != "a" {
		t.Fatalf("first job started = %q", got)
	}
	q.Move(d, -5) // d now runs before b
	q.Cancel(a)   // running: stops at the next step
	waitStatus(t, h, a, StatusCanceled)
	if _, err := os.Stat(out("a")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("canceled job left a file: %v", err)
	}
	if got := <-started; got != "d" {
		t.Fatalf("after reorder the next job was %q, want d", got)
	}
	waitStatus(t, h, d, StatusDone)
	waitStatus(t, h, b, StatusDone)
	ec := waitStatus(t, h, c, StatusFailed)
	if ec.Error == "" {
		t.Fatal("failed job has no error text")
	}
	eb, _ := h.Get(b)
	if eb.Output != out("b") || eb.Phases["denoise"] != 5 {
		t.Fatalf("done entry = %+v", eb)
	}
	if log.final(a) != StatusCanceled || log.final(b) != StatusDone {
		t.Fatalf("observer saw a=%s b=%s", log.final(a), log.final(b))
	}
}

func TestQueueCancelQueuedAndClose(t *testing.T) {
	h, err := OpenHistory(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 8)
	q := NewQueue(h, stepRender(started), nil)
	dir := t.TempDir()
	a, _ := q.Submit(Request{Prompt: "a", Output: filepath.Join(dir, "a.mp4")})
	b, _ := q.Submit(Request{Prompt: "b", Output: filepath.Join(dir, "b.mp4")})
	<-started
	q.Cancel(b)
	waitStatus(t, h, b, StatusCanceled)
	if len(q.Pending()) != 0 {
		t.Fatalf("pending after cancel: %v", q.Pending())
	}
	q.Close()
	e, _ := h.Get(a)
	if e.Status != StatusCanceled {
		t.Fatalf("running job after Close: %s", e.Status)
	}
	if _, err := q.Submit(Request{}); err == nil {
		t.Fatal("submit after close accepted")
	}
}
