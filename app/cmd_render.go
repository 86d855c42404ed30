package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"h3studio/engine"
	"h3studio/engine/plan"
	"h3studio/media"
)

func init() {
	register(Command{
		Name:    "render",
		Summary: "generate an MP4 (video + soundtrack) from a request; the " + DemoModelText + " without -d",
		Run:     runRender,
	})
}

// Exit statuses of `h3studio render`.
const (
	ExitDone       = 0
	ExitFailed     = 1
	ExitBadRequest = 2
	ExitRefused    = 3
	ExitCanceled   = 4
)

// exitError carries a command's exit status to Main.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode is the process status Main returns for this error.
func (e *exitError) ExitCode() int { return e.code }

// renderExit maps a render error to its exit status.
func renderExit(err error) error {
	var req *RequestError
	var ref *RefusedError
	var usage *UsageError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &usage):
		return err
	case errors.As(err, &req):
		return &exitError{ExitBadRequest, err}
	case errors.As(err, &ref):
		return &exitError{ExitRefused, err}
	case errors.Is(err, engine.ErrCanceled) || errors.Is(err, context.Canceled):
		return &exitError{ExitCanceled, errors.New(canceledText)}
	}
	return &exitError{ExitFailed, err}
}

func runRender(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("render", stderr)
	var r Request
	bindRequestFlags(fs, &r)
	progress := fs.String("progress", "human", "progress output: human (stderr), json (one event per line on stdout) or none")
	history := fs.String("history", "", "job history folder (default: the user's cache folder)")
	memGB := fs.Float64("memory-gb", 0, "memory budget in GB (overrides the machine profile's)")
	maxSeq := fs.Int("max-sequence", 0, "Qwen sequence limit of the backend (0: none)")
	threads := fs.Int("threads", 0, "CPU threads (0: all)")
	preview := fs.Bool("preview", false, "with --progress json, mark steps that carry a preview frame")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: h3studio render [request flags] -o OUT.mp4 [--progress human|json|none]")
		fs.PrintDefaults()
	}
	if err := parseRequestFlags(fs, &r, args); err != nil {
		return err
	}
	switch *progress {
	case "human", "json", "none":
	default:
		return &UsageError{Msg: fmt.Sprintf("--progress %q: want human, json or none", *progress)}
	}
	if *memGB < 0 || *maxSeq < 0 || *threads < 0 {
		return &UsageError{Msg: "--memory-gb, --max-sequence and --threads must not be negative"}
	}
	cacheDir, err := userCacheDir()
	if err != nil {
		return err
	}
	if *history == "" {
		*history = filepath.Join(cacheDir, "history")
	}
	rd := &Renderer{CacheDir: cacheDir, HistoryDir: *history, Threads: *threads, MemoryGB: *memGB,
		PlanOptions: plan.Options{MaxSequence: *maxSeq}, Preview: *preview,
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	defer rd.Close()
	if r, err = withModelFlags(fs, rd, r); err != nil {
		return renderExit(err)
	}
	// Validate and plan before a job exists, once: a bad request never
	// reaches the history or loads a weight, and the queue runs this plan.
	job, err := rd.Prepare(ctx, r)
	if err != nil {
		return renderExit(err)
	}
	if *progress == "human" {
		// Which device renders is the first thing a slow run makes one ask.
		c := job.Engine.Backend()
		fmt.Fprintf(stderr, "backend %s (%s)\n", c.Name, c.Description)
	}
	hist, err := OpenHistory(*history)
	if err != nil {
		return err
	}
	sweepInterrupted(hist, staleTemp)
	rep := newReporter(*progress, stdout, stderr)
	return renderExit(runJob(ctx, hist, job, job.asked, rep))
}

// runJob submits one prepared request to a queue and waits for it,
// cancelling it when ctx ends (Ctrl-C).
func runJob(ctx context.Context, hist *History, job *Job, r Request, rep *reporter) error {
	// The queue runs only this job, so every event is about it (the id is
	// not known yet when the queue reports the job as queued).
	done := make(chan JobEvent, 1)
	q := NewQueue(hist, job.Render, func(ev JobEvent) {
		if ev.Event != nil {
			rep.event(ev.JobID, *ev.Event)
			return
		}
		switch ev.Status {
		case StatusDone, StatusFailed, StatusCanceled:
			done <- ev
		}
	})
	defer q.Close()
	id, err := q.Submit(r)
	if err != nil {
		return err
	}
	var ev JobEvent
	select {
	case ev = <-done:
	case <-ctx.Done():
		q.Cancel(id)
		ev = <-done
	}
	rep.finish(id, ev, r.Output)
	switch ev.Status {
	case StatusDone:
		return rep.writeErr()
	case StatusCanceled:
		return engine.ErrCanceled
	}
	if ev.Err == nil {
		return errors.New("the job failed")
	}
	return ev.Err
}

// staleTemp is how old a temporary output must be before a sweep removes
// it: far longer than a live encode goes without writing a frame, so a
// second process's running render is never touched.
const staleTemp = 10 * time.Minute

// sweepInterrupted removes the temporary outputs (media's temp files and
// PNG folders) that jobs interrupted by a crash or a kill left beside their
// output files, and returns how many it removed. Finished outputs are
// never temporary files, so they are untouched.
func sweepInterrupted(h *History, olderThan time.Duration) int {
	list, err := h.List()
	if err != nil {
		return 0
	}
	dirs := map[string]bool{}
	for _, e := range list {
		if e.Status == StatusInterrupted && e.Output != "" {
			dirs[filepath.Dir(e.Output)] = true
		}
	}
	n := 0
	for d := range dirs {
		if k, err := media.SweepTemps(d, olderThan); err == nil {
			n += k
		}
	}
	return n
}

// flagSet reports whether the named flag was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// userCacheDir is H3 Studio's folder in the user's cache directory.
func userCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for the built-in models and the history: %w", err)
	}
	return filepath.Join(d, "h3studio"), nil
}

// reporter prints progress as text on stderr or as JSON lines on stdout.
type reporter struct {
	mode   string
	out    io.Writer
	mu     sync.Mutex
	enc    *json.Encoder
	last   time.Time
	lastPh engine.Phase
	// werr is the first failure to write a JSON event: a tool reading the
	// stream must learn that it missed events, so the command reports it.
	werr error
}

func (rp *reporter) encode(v any) {
	if err := rp.enc.Encode(v); err != nil && rp.werr == nil {
		rp.werr = fmt.Errorf("writing progress: %w", err)
	}
}

// writeErr is the first progress write failure, if any.
func (rp *reporter) writeErr() error {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return rp.werr
}

func newReporter(mode string, stdout, stderr io.Writer) *reporter {
	rp := &reporter{mode: mode, out: stderr}
	if mode == "json" {
		rp.out = stdout
		rp.enc = json.NewEncoder(stdout)
	}
	return rp
}

// jsonEvent is one line of --progress json.
type jsonEvent struct {
	Job       string        `json:"job"`
	Kind      string        `json:"kind"` // start, progress, end, decision, warning, done, result
	Phase     string        `json:"phase,omitempty"`
	Step      int           `json:"step,omitempty"`
	Total     int           `json:"total,omitempty"`
	ElapsedMS int64         `json:"elapsed_ms,omitempty"`
	ETAMS     int64         `json:"eta_ms,omitempty"`
	Message   string        `json:"message,omitempty"`
	Preview   bool          `json:"preview,omitempty"`
	Stats     *engine.Stats `json:"stats,omitempty"`
	Status    string        `json:"status,omitempty"`
	Output    string        `json:"output,omitempty"`
	Error     string        `json:"error,omitempty"`
}

func (rp *reporter) event(id string, ev engine.Event) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	kind := string(ev.Kind)
	if kind == "" {
		kind = "progress"
	}
	switch rp.mode {
	case "json":
		rp.encode(jsonEvent{Job: id, Kind: kind, Phase: string(ev.Phase), Step: ev.Step, Total: ev.Total,
			ElapsedMS: ev.Elapsed.Milliseconds(), ETAMS: ev.ETA.Milliseconds(), Message: ev.Message,
			Preview: ev.Preview != nil, Stats: ev.Stats})
	case "human":
		rp.human(ev)
	}
}

func (rp *reporter) human(ev engine.Event) {
	switch ev.Kind {
	case engine.EventStart:
		fmt.Fprintf(rp.out, "%s ...\n", ev.Phase)
	case engine.EventEnd:
		msg := ""
		if ev.Message != "" {
			msg = ": " + ev.Message
		}
		fmt.Fprintf(rp.out, "%s done in %s%s\n", ev.Phase, ev.Elapsed.Round(time.Millisecond), msg)
	case engine.EventDecision:
		fmt.Fprintf(rp.out, "planner: %s\n", ev.Message)
	case engine.EventWarning:
		fmt.Fprintf(rp.out, "warning: %s\n", ev.Message)
	case engine.EventDone:
		var parts []string
		for _, p := range ev.Stats.Phases {
			parts = append(parts, fmt.Sprintf("%s %s", p.Phase, p.Elapsed.Round(time.Millisecond)))
		}
		fmt.Fprintf(rp.out, "generated %d frames from %d DiT rows in %s (%s), peak memory %s\n",
			ev.Stats.Frames, ev.Stats.Rows, ev.Stats.Total.Round(time.Millisecond), strings.Join(parts, ", "), GBText(ev.Stats.PeakBytes))
	default:
		// Step lines at most 4 a second, and always the last step.
		if ev.Total == 0 || (ev.Step < ev.Total && ev.Phase == rp.lastPh && time.Since(rp.last) < 250*time.Millisecond) {
			return
		}
		rp.last, rp.lastPh = time.Now(), ev.Phase
		eta := ""
		if ev.ETA > 0 {
			eta = fmt.Sprintf(", %s left", ev.ETA.Round(100*time.Millisecond))
		}
		fmt.Fprintf(rp.out, "  %s %d/%d%s\n", ev.Phase, ev.Step, ev.Total, eta)
	}
}

// finish reports the job's outcome.
func (rp *reporter) finish(id string, ev JobEvent, output string) {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	switch rp.mode {
	case "json":
		je := jsonEvent{Job: id, Kind: "result", Status: string(ev.Status)}
		if ev.Status == StatusDone {
			je.Output = output
		}
		if ev.Err != nil {
			je.Error = ev.Err.Error()
		}
		rp.encode(je)
	case "human":
		if ev.Status == StatusDone {
			fmt.Fprintf(rp.out, "wrote %s\n", output)
		}
	}
}
