package download

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Result summarizes a Fetch.
type Result struct {
	// Fetched files were transferred (or resumed); Kept ones were already
	// in the folder, unrecorded, and verified; Skipped ones were complete.
	Fetched, Kept, Skipped int
	// Moved is the bytes that crossed the network in this run.
	Moved   int64
	Elapsed time.Duration
	// Rate is Moved over Elapsed, in bytes per second.
	Rate float64
}

// progressInterval is how often Fetch reports; the window and the
// terminal bar redraw at that pace at most.
const progressInterval = 250 * time.Millisecond

// maxTries bounds the attempts at a file that make no progress; any
// attempt that moves bytes resets the count, so a connection that drops
// every few minutes still finishes.
const maxTries = 6

// Fetch downloads the plan's incomplete files into p.Dir, a bounded
// number at once, calling progress (nil: none) from one goroutine. A
// file that fails is reported and the others go on; a refused token, a
// full disk or a cancelled ctx stop everything. The error joins one
// sentence per failed file.
func (c *Client) Fetch(ctx context.Context, p *Plan, progress func(Progress)) (Result, error) {
	start := time.Now()
	var todo []File
	for _, f := range p.Files {
		if !p.Complete[f.Path] {
			todo = append(todo, f)
		}
	}
	// Largest first: the run ends soonest when the big files start early.
	sort.SliceStable(todo, func(i, j int) bool { return todo[i].Size > todo[j].Size })
	m := newMeter(len(p.Files), p.Size(), p.Size()-p.Need)
	m.p.FilesDone = len(p.Complete)
	stopReports := reportEvery(m, progress)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		errs  []error
		fatal bool
		wg    sync.WaitGroup
	)
	var kept atomic.Int64
	jobs := make(chan File)
	for range min(c.concurrency, max(len(todo), 1)) {
		wg.Go(func() {
			for f := range jobs {
				ok, err := c.keep(p, f, m)
				if ok {
					kept.Add(1)
				} else if err == nil {
					err = c.fetchFile(ctx, p, f, m)
				}
				if err == nil {
					m.fileDone()
					continue
				}
				mu.Lock()
				stop := errors.Is(err, ErrAuth) || errors.Is(err, ErrNoSpace)
				if !fatal && !(errors.Is(err, context.Canceled) && ctx.Err() != nil) {
					errs = append(errs, err)
				}
				if stop {
					fatal = true
					cancel()
				}
				mu.Unlock()
			}
		})
	}
feed:
	for _, f := range todo {
		select {
		case jobs <- f:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	stopReports()
	now := time.Now()
	r := Result{Fetched: len(todo) - int(kept.Load()), Kept: int(kept.Load()), Skipped: len(p.Complete), Moved: m.moved, Elapsed: now.Sub(start), Rate: m.average(now)}
	if len(errs) == 0 && ctx.Err() != nil {
		return r, ctx.Err()
	}
	return r, errors.Join(errs...)
}

// reportEvery calls progress from one goroutine until the returned stop
// is called, which sends the final event.
func reportEvery(m *meter, progress func(Progress)) (stop func()) {
	if progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		progress(m.snapshot(time.Now()))
		for {
			select {
			case now := <-t.C:
				progress(m.snapshot(now))
			case <-done:
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		p := m.snapshot(time.Now())
		p.Final, p.ETA = true, 0
		progress(p)
	}
}

// keep verifies an unrecorded file already at its final path and records
// it if it matches; one that does not is fetched again, and replaced only
// once its new bytes are verified.
func (c *Client) keep(p *Plan, f File, m *meter) (bool, error) {
	if !p.Unverified[f.Path] {
		return false, nil
	}
	ok, err := matches(p.finalPath(f), f)
	if err != nil {
		return false, err
	}
	if !ok {
		c.log.Info("download: the file in the folder differs from the hub's, fetching it again", "file", f.Path)
		m.add(-f.Size) // Prepare counted it as there
		return false, nil
	}
	return true, p.manifest.record(f)
}

func (c *Client) fetchFile(ctx context.Context, p *Plan, f File, m *meter) error {
	final := p.finalPath(f)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return writeError(f, filepath.Dir(final), err)
	}
	pt, err := openPartial(final+PartialSuffix, f)
	if err != nil {
		return err
	}
	defer pt.close()
	tries, delay := 0, c.retryDelay
	for {
		before := pt.have
		err := c.transfer(ctx, p.Snapshot, pt, m)
		var r *retryable
		if !errors.As(err, &r) {
			if err == nil {
				if err := pt.commit(final); err != nil {
					return err
				}
				return p.manifest.record(f)
			}
			if (errors.Is(err, ErrAuth) || errors.Is(err, ErrNoSpace) || ctx.Err() != nil) && pt.have > 0 {
				return err // the bytes so far are good; the next run resumes them
			}
			return pt.discard(err)
		}
		if pt.have > before {
			tries, delay = 0, c.retryDelay
		}
		if tries++; tries >= maxTries {
			return &FileError{Path: f.Path, Msg: fmt.Sprintf("could not be fetched in %d tries (%v); its partial file is kept, so run the download again to resume", maxTries, r.err)}
		}
		c.log.Warn("download: transfer interrupted, resuming", "file", f.Path, "bytes", pt.have, "err", r.err)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
		delay = min(2*delay, 30*time.Second)
	}
}

// retryable is a failure worth another attempt from where it stopped: a
// dropped connection, a busy hub.
type retryable struct{ err error }

func (r *retryable) Error() string { return r.err.Error() }

// transfer makes one request for the rest of the file and writes what
// arrives. nil means the server sent all it has; commit then checks it.
func (c *Client) transfer(ctx context.Context, s *Snapshot, pt *partial, m *meter) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	watchdog := time.AfterFunc(c.stallTimeout, func() { cancel(errStalled) })
	defer watchdog.Stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.resolveURL(s, pt.f), nil)
	if err != nil {
		return fmt.Errorf("download: %s: %w", pt.f.Path, err)
	}
	if pt.have > 0 {
		// The URL names a commit, so the bytes cannot have changed since
		// the partial file began and no If-Range is needed.
		req.Header.Set("Range", "bytes="+strconv.FormatInt(pt.have, 10)+"-")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return transportError(ctx, err)
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusOK:
		if pt.have > 0 {
			m.add(-pt.have) // the server ignored the Range
			if err := pt.restart(); err != nil {
				return err
			}
		}
	case code == http.StatusPartialContent:
		if start, ok := rangeStart(resp.Header.Get("Content-Range")); !ok || start != pt.have {
			m.add(-pt.have)
			if err := pt.restart(); err != nil {
				return err
			}
			return &retryable{fmt.Errorf("the hub sent a range other than the one asked for (%q)", resp.Header.Get("Content-Range"))}
		}
	case code == http.StatusRequestedRangeNotSatisfiable:
		return c.unsatisfiable(pt, resp.Header.Get("Content-Range"), m)
	case code == http.StatusTooManyRequests || code >= 500:
		return &retryable{fmt.Errorf("the hub answered %d %s", code, http.StatusText(code))}
	default:
		return c.statusError(resp, s.Repo, pt.f.Path, s.Revision)
	}
	if pt.f.SHA256 == "" {
		pt.etag = strings.Trim(strings.TrimPrefix(resp.Header.Get("ETag"), "W/"), `"`)
	}
	body := &watched{r: resp.Body, alive: func() { watchdog.Reset(c.stallTimeout) }}
	if err := copyBody(ctx, body, pt, m); err != nil {
		return err
	}
	if resp.ContentLength < 0 && pt.have < pt.f.Size {
		// Without a length, a dropped connection looks like a clean end.
		return &retryable{errors.New("the connection closed before the whole file arrived")}
	}
	return nil
}

// unsatisfiable handles a 416: the partial file already holds every byte
// (commit verifies it), or it does not match the hub's file and starts
// again from zero.
func (c *Client) unsatisfiable(pt *partial, contentRange string, m *meter) error {
	total, err := strconv.ParseInt(strings.TrimPrefix(contentRange, "bytes */"), 10, 64)
	if err == nil && total == pt.have {
		return nil
	}
	if pt.have == 0 {
		return &FileError{Path: pt.f.Path, Msg: "is refused by the hub with 416 even from its first byte; try again later"}
	}
	m.add(-pt.have)
	if err := pt.restart(); err != nil {
		return err
	}
	return &retryable{fmt.Errorf("the hub's file does not match the partial one (416, %q)", contentRange)}
}

// copyBlock is the unit read, hashed and written, small enough to stay in
// the core's cache between the three: 1 GiB written in 1 MiB blocks ran at
// 0.8-1.1 GB/s here against 1.6-4.7 GB/s in 64 KiB ones. End to end, on a
// loaded 2-core machine, the 1 GiB bench (tools/bench/download) could not
// tell the two apart (0.32-0.61 of curl's rate across runs of either).
const copyBlock = 64 << 10

// copyBody writes the response body into the partial file.
func copyBody(ctx context.Context, body io.Reader, pt *partial, m *meter) error {
	buf := make([]byte, copyBlock)
	for {
		n, err := fill(body, buf)
		if n > 0 {
			if werr := pt.write(buf[:n]); werr != nil {
				return werr
			}
			m.add(int64(n))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return transportError(ctx, err)
		}
	}
}

// fill reads until buf is full or the reader fails. Unlike io.ReadFull it
// passes the body's own io.ErrUnexpectedEOF (a body shorter than its
// Content-Length) through unchanged and reports a clean end as io.EOF.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// errStalled ends a request that received nothing for the stall timeout.
var errStalled = errors.New("no data arrived for a while")

// transportError classifies a failed request or body read; ctx is the
// request's own, whose cause tells a stall from a cancelled download.
func transportError(ctx context.Context, err error) error {
	switch cause := context.Cause(ctx); {
	case cause == nil:
		return &retryable{err}
	case errors.Is(cause, errStalled):
		return &retryable{errStalled}
	default:
		return ctx.Err()
	}
}

// watched reports every read that brings bytes, to hold off the watchdog.
type watched struct {
	r     io.Reader
	alive func()
}

func (w *watched) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	if n > 0 {
		w.alive()
	}
	return n, err
}

// rangeStart reads the first byte of "bytes START-END/TOTAL".
func rangeStart(h string) (int64, bool) {
	spec, ok := strings.CutPrefix(h, "bytes ")
	if !ok {
		return 0, false
	}
	first, _, ok := strings.Cut(spec, "-")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(first, 10, 64)
	return n, err == nil
}
