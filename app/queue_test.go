package app

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
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

// The queue's own view of its jobs is what a window shows: run order after
// a move, each job's status as its observer is told it, and the outcome of
// each (clip, error, summary).
func TestQueueJobs(t *testing.T) {
	h, err := OpenHistory(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gate := make(chan struct{})
	render := func(ctx context.Context, req Request, sink engine.Sink) (string, error) {
		<-gate
		if req.Prompt == "fail" {
			return "", errors.New("engine: the model refused")
		}
		sink(engine.Event{Kind: engine.EventDone, Phase: engine.PhaseDone, Stats: &engine.Stats{Total: 1500 * time.Millisecond}})
		return req.Output, nil
	}
	var q *Queue
	var mu sync.Mutex
	var stale []string
	observe := func(ev JobEvent) {
		if ev.Event != nil {
			return
		}
		// The view must already say what the observer is told.
		if j, ok := q.Job(ev.JobID); !ok || j.Status != ev.Status {
			mu.Lock()
			stale = append(stale, fmt.Sprintf("%s told %s, view %s", ev.JobID, ev.Status, j.Status))
			mu.Unlock()
		}
	}
	q = NewQueue(h, render, observe)
	defer q.Close()
	ids := map[string]string{}
	for _, p := range []string{"a", "b", "fail", "d"} {
		id, err := q.Submit(Request{Prompt: p, Output: filepath.Join(dir, p+".mp4")})
		if err != nil {
			t.Fatal(err)
		}
		ids[p] = id
	}
	waitStatus(t, h, ids["a"], StatusRunning)
	q.Move(ids["d"], -5) // a has left the queue to run; d goes first of the rest
	q.Cancel(ids["b"])
	close(gate)
	// The view, not the history: finish writes the history entry first.
	deadline := time.Now().Add(10 * time.Second)
	for j, _ := q.Job(ids["fail"]); j.Status != StatusFailed; j, _ = q.Job(ids["fail"]) {
		if time.Now().After(deadline) {
			t.Fatalf("the failing job is %s, want failed", j.Status)
		}
		time.Sleep(time.Millisecond)
	}
	var order []string
	for _, j := range q.Jobs() {
		order = append(order, j.Request.Prompt+":"+string(j.Status))
	}
	if got, want := strings.Join(order, " "), "a:done b:canceled d:done fail:failed"; got != want {
		t.Errorf("jobs %q, want %q", got, want)
	}
	d, _ := q.Job(ids["d"])
	if d.Output != filepath.Join(dir, "d.mp4") || d.Stats != "1.5 s" || d.Err != nil {
		t.Errorf("done job %+v", d)
	}
	if f, _ := q.Job(ids["fail"]); f.Err == nil || f.Output != "" {
		t.Errorf("failed job %+v", f)
	}
	if _, ok := q.Job("nope"); ok {
		t.Error("an unknown id has a job")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(stale) > 0 {
		t.Errorf("observer told before the view changed: %v", stale)
	}
}

// ClearFinished forgets the jobs that ended, however they ended, and keeps
// the running and queued ones; the history keeps every entry.
func TestQueueClearFinished(t *testing.T) {
	h, err := OpenHistory(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gate := make(chan struct{})
	render := func(ctx context.Context, req Request, sink engine.Sink) (string, error) {
		if req.Prompt == "hold" {
			select {
			case <-gate:
			case <-ctx.Done():
				return "", engine.ErrCanceled
			}
		}
		if req.Prompt == "fail" {
			return "", errors.New("engine: the model refused")
		}
		return req.Output, os.WriteFile(req.Output, []byte(req.Prompt), 0o644)
	}
	q := NewQueue(h, render, nil)
	defer q.Close()
	ids := map[string]string{}
	for _, p := range []string{"done", "fail", "hold", "next", "dropped"} {
		id, err := q.Submit(Request{Prompt: p, Output: filepath.Join(dir, p+".mp4")})
		if err != nil {
			t.Fatal(err)
		}
		ids[p] = id
	}
	q.Cancel(ids["dropped"])
	waitStatus(t, h, ids["hold"], StatusRunning)
	if n := q.ClearFinished(); n != 3 {
		t.Errorf("cleared %d jobs, want 3 (done, failed, canceled)", n)
	}
	var left []string
	for _, j := range q.Jobs() {
		left = append(left, j.Request.Prompt+":"+string(j.Status))
	}
	if got, want := strings.Join(left, " "), "hold:running next:queued"; got != want {
		t.Errorf("after ClearFinished: %q, want %q", got, want)
	}
	if j, ok := q.Job(ids["done"]); ok {
		t.Errorf("a cleared job is still there: %+v", j)
	}
	close(gate)
	waitStatus(t, h, ids["next"], StatusDone)
	entries, err := h.List()
	if err != nil || len(entries) != 5 {
		t.Errorf("history has %d entries (%v), want all 5", len(entries), err)
	}
	e, _ := h.Get(ids["next"])
	if e.Started.IsZero() || !e.Finished.After(e.Started) {
		t.Errorf("history entry started %v, finished %v", e.Started, e.Finished)
	}
}

// A job that stops early keeps its last step preview as its row's
// picture; a job without a clip or a preview has none.
func TestQueueKeepsTheLastPreview(t *testing.T) {
	h, err := OpenHistory(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	last := image.NewNRGBA(image.Rect(0, 0, 8, 8))
	render := func(ctx context.Context, req Request, sink engine.Sink) (string, error) {
		if req.Prompt == "previewed" {
			sink(engine.Event{Phase: engine.PhaseDenoise, Step: 1, Total: 2, Preview: image.NewNRGBA(image.Rect(0, 0, 8, 8))})
			sink(engine.Event{Phase: engine.PhaseDenoise, Step: 2, Total: 2, Preview: last})
		}
		return "", errors.New("engine: the model refused")
	}
	q := NewQueue(h, render, nil)
	defer q.Close()
	a, _ := q.Submit(Request{Prompt: "previewed"})
	b, _ := q.Submit(Request{Prompt: "bare"})
	waitStatus(t, h, b, StatusFailed)
	for id, want := range map[string]image.Image{a: last, b: nil} {
		if j, _ := q.Job(id); j.Thumb != want {
			t.Errorf("%s: thumbnail %v, want %v", j.Request.Prompt, j.Thumb != nil, want != nil)
		}
	}
}

// A job that ends at once (a render that fails before its first step)
// ends in the history too: Submit used to write the "queued" entry after
// the worker could already have run the job, leaving it queued for good
// (and "interrupted" after a restart). Racy by nature, so many jobs.
func TestQueueHistoryOfJobsThatEndAtOnce(t *testing.T) {
	h, err := OpenHistory(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	render := func(ctx context.Context, req Request, sink engine.Sink) (string, error) {
		return "", errors.New("engine: the model refused")
	}
	q := NewQueue(h, render, nil)
	var ids []string
	for i := 0; i < 50; i++ {
		id, err := q.Submit(Request{Prompt: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	deadline := time.Now().Add(10 * time.Second)
	for j, _ := q.Job(ids[len(ids)-1]); j.Status != StatusFailed; j, _ = q.Job(ids[len(ids)-1]) {
		if time.Now().After(deadline) {
			t.Fatalf("the last job is %s", j.Status)
		}
		time.Sleep(time.Millisecond)
	}
	q.Close()
	stuck := 0
	for _, id := range ids {
		if e, err := h.Get(id); err != nil || e.Status != StatusFailed {
			stuck++
		}
	}
	if stuck > 0 {
		t.Errorf("%d of %d jobs that failed at once are not failed in the history", stuck, len(ids))
	}
}
