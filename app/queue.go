package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"strconv"
	"sync"
	"time"

	"h3studio/engine"
)

// RenderFunc runs one job to completion, reporting progress through sink,
// and returns the path of the finished clip. It must stop soon after ctx is
// canceled, returning an error that wraps context.Canceled or
// engine.ErrCanceled, and leave nothing at the output path in that case.
type RenderFunc func(ctx context.Context, req Request, sink engine.Sink) (output string, err error)

// JobEvent is what the queue tells its observer: a status change, or an
// engine progress event of the running job.
type JobEvent struct {
	JobID  string
	Status JobStatus
	Event  *engine.Event // nil for pure status changes
	Err    error
}

// Queue runs render jobs one at a time on a worker goroutine, in submission
// order (editable until a job starts), recording each in the history.
type Queue struct {
	hist    *History
	render  RenderFunc
	observe func(JobEvent)

	mu      sync.Mutex
	pending []queued
	running *runningJob
	wake    chan struct{}
	closed  bool
	done    chan struct{}
	seq     int
	// jobs is every job this queue was given, by id; left lists those
	// that left pending (started, or canceled before they ran) in order.
	jobs map[string]*JobInfo
	left []string
}

// JobInfo is one job as a view of the queue shows it. The queue keeps it
// up to date before it tells its observer, so an observer that reads Jobs
// sees the change it was told about.
type JobInfo struct {
	ID      string
	Request Request
	Status  JobStatus
	// Output is the finished clip, once the job is done.
	Output string
	// Err is why the job failed, or why its history entry could not be
	// written.
	Err error
	// Stats is the finished run in words (StatsText).
	Stats string
	// Started and Finished bound the run (zero until it starts, ends).
	Started, Finished time.Time
	// Thumb is a picture of the finished job for its row: the clip's
	// poster frame, or the last step preview of a job that stopped
	// early; nil when there is neither.
	Thumb image.Image
}

type queued struct {
	id  string
	req Request
}

type runningJob struct {
	id     string
	cancel context.CancelFunc
}

// NewQueue starts the worker. observe receives every JobEvent: progress on
// the worker goroutine, and the status changes Submit and Cancel make
// synchronously on the caller's goroutine before they return. It must not
// block, and must not wait for a lock its callers of Submit/Cancel hold.
// It may call Jobs and Job: the queue holds no lock of its own while it
// calls observe, and the jobs already show the change observe is told.
func NewQueue(hist *History, render RenderFunc, observe func(JobEvent)) *Queue {
	if observe == nil {
		observe = func(JobEvent) {}
	}
	q := &Queue{hist: hist, render: render, observe: observe, wake: make(chan struct{}, 1), done: make(chan struct{}),
		jobs: map[string]*JobInfo{}}
	go q.work()
	return q
}

// Submit queues req and returns its job id.
func (q *Queue) Submit(req Request) (string, error) {
	req, err := withLoRADigests(req) // the history says which adapter files made the clip
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return "", fmt.Errorf("queue: encode request: %w", err)
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return "", errors.New("queue: closed")
	}
	q.seq++
	now := time.Now()
	id := now.UTC().Format("20060102-150405") + "-" + strconv.Itoa(q.seq)
	q.mu.Unlock()

	// The entry is written before the job can run: the worker updates it
	// as the job goes, and a job that ended before its entry was written
	// (a render that fails at once) was left "queued" in the history.
	e := Entry{ID: id, Status: StatusQueued, Created: now, Output: req.Output, Request: raw}
	if err := q.hist.Put(e); err != nil {
		return "", err
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		e.Status, e.Finished = StatusCanceled, time.Now()
		return "", errors.Join(errors.New("queue: closed"), q.hist.Put(e))
	}
	q.pending = append(q.pending, queued{id: id, req: req})
	q.jobs[id] = &JobInfo{ID: id, Request: req, Status: StatusQueued}
	q.mu.Unlock()
	q.observe(JobEvent{JobID: id, Status: StatusQueued})
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return id, nil
}

// Cancel stops a running job at its next step boundary, or removes a queued
// one. Unknown or finished ids are ignored.
func (q *Queue) Cancel(id string) {
	q.mu.Lock()
	if q.running != nil && q.running.id == id {
		q.running.cancel()
		q.mu.Unlock()
		return
	}
	for i, p := range q.pending {
		if p.id == id {
			q.pending = append(q.pending[:i], q.pending[i+1:]...)
			q.left = append(q.left, id)
			q.mu.Unlock()
			q.finish(id, StatusCanceled, "", nil, nil)
			return
		}
	}
	q.mu.Unlock()
}

// Move shifts a queued job by delta places (negative: earlier).
func (q *Queue) Move(id string, delta int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, p := range q.pending {
		if p.id != id {
			continue
		}
		j := min(max(i+delta, 0), len(q.pending)-1)
		q.pending = append(q.pending[:i], q.pending[i+1:]...)
		q.pending = append(q.pending[:j], append([]queued{p}, q.pending[j:]...)...)
		return
	}
}

// ClearFinished forgets the jobs that are done, failed or canceled, so the
// queue shows what is still to come; their history entries stay. It
// reports how many it cleared.
func (q *Queue) ClearFinished() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	kept := q.left[:0]
	n := 0
	for _, id := range q.left {
		if q.jobs[id].Finished.IsZero() {
			kept = append(kept, id)
			continue
		}
		delete(q.jobs, id)
		n++
	}
	q.left = kept
	return n
}

// Pending lists queued job ids in run order.
func (q *Queue) Pending() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	ids := make([]string, len(q.pending))
	for i, p := range q.pending {
		ids[i] = p.id
	}
	return ids
}

// Jobs lists every job the queue was given, in run order: those that left
// the queue (ran, or were canceled before running) in the order they left,
// then the queued ones in the order they will run.
func (q *Queue) Jobs() []JobInfo {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]JobInfo, 0, len(q.left)+len(q.pending))
	for _, id := range q.left {
		out = append(out, *q.jobs[id])
	}
	for _, p := range q.pending {
		out = append(out, *q.jobs[p.id])
	}
	return out
}

// Job is one job as Jobs lists it; false for an id the queue never had.
func (q *Queue) Job(id string) (JobInfo, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j, ok := q.jobs[id]
	if !ok {
		return JobInfo{}, false
	}
	return *j, true
}

// update changes a job's view under the lock (before the observer hears).
func (q *Queue) update(id string, f func(*JobInfo)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if j, ok := q.jobs[id]; ok {
		f(j)
	}
}

// Close cancels the running job, drops queued ones (they stay in history as
// canceled) and waits for the worker to stop.
func (q *Queue) Close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		<-q.done
		return
	}
	q.closed = true
	if q.running != nil {
		q.running.cancel()
	}
	dropped := q.pending
	q.pending = nil
	for _, p := range dropped {
		q.left = append(q.left, p.id)
	}
	q.mu.Unlock()
	for _, p := range dropped {
		q.finish(p.id, StatusCanceled, "", nil, nil)
	}
	close(q.wake)
	<-q.done
}

func (q *Queue) work() {
	defer close(q.done)
	for range q.wake {
		for q.runNext() {
		}
	}
}

// runNext runs the first queued job, if any, and reports whether it did.
func (q *Queue) runNext() bool {
	q.mu.Lock()
	if len(q.pending) == 0 || q.closed {
		q.mu.Unlock()
		return false
	}
	job := q.pending[0]
	q.pending = q.pending[1:]
	q.left = append(q.left, job.id)
	ctx, cancel := context.WithCancel(context.Background())
	q.running = &runningJob{id: job.id, cancel: cancel}
	q.mu.Unlock()
	defer cancel()

	q.setStatus(job.id, StatusRunning)
	phases := map[string]int64{}
	var preview image.Image
	var stats json.RawMessage
	var summary string
	sink := func(ev engine.Event) {
		if ev.Elapsed > 0 {
			phases[string(ev.Phase)] = ev.Elapsed.Milliseconds()
		}
		if ev.Plan != nil {
			q.recordPlan(job.id, ev.Plan)
		}
		if ev.Preview != nil {
			preview = ev.Preview
		}
		if ev.Stats != nil {
			for k, v := range phaseMillis(*ev.Stats) {
				phases[k] = v
			}
			summary = StatsText(ev.Stats)
			if raw, err := json.Marshal(ev.Stats); err == nil {
				stats = raw
			}
		}
		q.observe(JobEvent{JobID: job.id, Status: StatusRunning, Event: &ev})
	}
	out, err := q.render(ctx, job.req, sink)

	q.mu.Lock()
	q.running = nil
	q.mu.Unlock()
	q.recordStats(job.id, stats)
	thumb := preview
	if err == nil {
		// The clip's own frame, drawn now so the row has it when the
		// observer hears the job is done; the last preview otherwise.
		if th, terr := Thumbnail(ctx, out, ThumbSide); terr == nil {
			thumb = th
		}
	}
	q.update(job.id, func(j *JobInfo) { j.Stats, j.Thumb = summary, thumb })
	switch {
	case err == nil:
		q.finish(job.id, StatusDone, out, nil, phases)
	case ctx.Err() != nil || errors.Is(err, engine.ErrCanceled) || errors.Is(err, context.Canceled):
		q.finish(job.id, StatusCanceled, "", nil, phases)
	default:
		q.finish(job.id, StatusFailed, "", err, phases)
	}
	return true
}

// recordPlan stores the job's plan in its history entry as soon as it is
// known, so even a job that later fails or is killed shows what it planned.
func (q *Queue) recordPlan(id string, p any) {
	raw, err := json.Marshal(p)
	if err != nil {
		return
	}
	if e, err := q.hist.Get(id); err == nil {
		e.Plan = raw
		if perr := q.hist.Put(e); perr != nil {
			q.observe(JobEvent{JobID: id, Status: e.Status, Err: perr})
		}
	}
}

func (q *Queue) recordStats(id string, stats json.RawMessage) {
	if len(stats) == 0 {
		return
	}
	if e, err := q.hist.Get(id); err == nil {
		e.Stats = stats
		if perr := q.hist.Put(e); perr != nil {
			q.observe(JobEvent{JobID: id, Status: e.Status, Err: perr})
		}
	}
}

func (q *Queue) setStatus(id string, s JobStatus) {
	now := time.Now()
	q.update(id, func(j *JobInfo) { j.Status, j.Started = s, now })
	if e, err := q.hist.Get(id); err == nil {
		e.Status = s
		e.Started = now
		if perr := q.hist.Put(e); perr != nil {
			q.update(id, func(j *JobInfo) { j.Err = perr })
			q.observe(JobEvent{JobID: id, Status: s, Err: perr})
			return
		}
	}
	q.observe(JobEvent{JobID: id, Status: s})
}

func (q *Queue) finish(id string, s JobStatus, output string, jobErr error, phases map[string]int64) {
	now := time.Now()
	e, err := q.hist.Get(id)
	if err == nil {
		e.Status = s
		e.Finished = now
		if output != "" {
			e.Output = output
		}
		if jobErr != nil {
			e.Error = jobErr.Error()
		}
		if len(phases) > 0 {
			e.Phases = phases
		}
		err = q.hist.Put(e)
	}
	if jobErr == nil {
		jobErr = err
	}
	q.update(id, func(j *JobInfo) {
		j.Status, j.Output, j.Err, j.Finished = s, output, jobErr, now
	})
	q.observe(JobEvent{JobID: id, Status: s, Err: jobErr})
}
