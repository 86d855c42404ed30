package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"h3studio/engine"
)

// inputs are reference files made by FFmpeg's own generators (not by our
// code): stills, a clip with a soundtrack, and audio clips.
type inputs struct {
	image1, image2, clip, audio, audio1s, text string
}

var (
	fxOnce sync.Once
	fx     inputs
	fxErr  error
)

func fixtures(t *testing.T) inputs {
	t.Helper()
	needFFmpeg(t)
	dir := filepath.Join(e2eCache(t), "inputs")
	fxOnce.Do(func() {
		fxErr = os.MkdirAll(dir, 0o755)
		p := func(n string) string { return filepath.Join(dir, n) }
		fx = inputs{image1: p("testsrc.png"), image2: p("mandelbrot.png"), clip: p("clip.mp4"), audio: p("tone.wav"), audio1s: p("short.wav"), text: p("notes.txt")}
		for _, args := range [][]string{
			{"-f", "lavfi", "-i", "testsrc=size=640x384", "-frames:v", "1", fx.image1},
			{"-f", "lavfi", "-i", "mandelbrot=size=96x128", "-frames:v", "1", fx.image2},
			{"-f", "lavfi", "-i", "testsrc=size=64x32:rate=24", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100",
				"-t", "2.5", "-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", fx.clip},
			{"-f", "lavfi", "-i", "sine=frequency=330:sample_rate=32000", "-t", "2.2", "-ac", "2", fx.audio},
			{"-f", "lavfi", "-i", "sine=frequency=330", "-t", "1", fx.audio1s},
		} {
			if fxErr != nil {
				return
			}
			out, err := exec.Command("ffmpeg", append([]string{"-v", "error", "-nostdin", "-y"}, args...)...).CombinedOutput()
			if err != nil {
				fxErr = errors.New("ffmpeg " + strings.Join(args, " ") + ": " + string(out))
			}
		}
		if fxErr == nil {
			fxErr = os.WriteFile(fx.text, []byte("not a picture\n"), 0o644)
		}
	})
	if fxErr != nil {
		t.Fatal(fxErr)
	}
	return fx
}

// TestBadRequests checks that every malformed request is refused by
// Prepare, which reads headers and plans but never runs a phase (weights
// load only inside Generate), with one sentence naming the problem.
func TestBadRequests(t *testing.T) {
	rd := newRenderer(t)
	f := fixtures(t)
	base := func() Request {
		r := tinyRequest(t, "bad.mp4")
		r.References = []Reference{{Kind: RefImage, Path: f.image1}}
		return r
	}
	thirteen := base()
	for len(thirteen.References) < 13 {
		thirteen.References = append(thirteen.References, Reference{Kind: RefImage, Path: f.image2})
	}
	cases := []struct {
		name string
		req  Request
		want string
	}{
		{"missing file", func() Request { r := base(); r.References[0].Path = filepath.Join(t.TempDir(), "gone.png"); return r }(), "no such file"},
		{"unsupported format", func() Request { r := base(); r.References[0].Path = f.text; return r }(), "not a video or audio file"},
		{"13 references", thirteen, "at most 12"},
		{"audio alone", func() Request { r := base(); r.References = []Reference{{Kind: RefAudio, Path: f.audio}}; return r }(), "at least one image or clip"},
		{"anchors with references", func() Request { r := base(); r.FirstFrame = f.image2; return r }(), "cannot be mixed"},
		{"1 s audio", func() Request {
			r := base()
			r.References = append(r.References, Reference{Kind: RefAudio, Path: f.audio1s})
			return r
		}(), "at least 2 s"},
		{"width 500", func() Request { r := base(); r.Width = 500; return r }(), "multiples of 32"},
	}
	for _, c := range cases {
		_, err := rd.Prepare(context.Background(), c.req)
		var re *RequestError
		if !errors.As(err, &re) {
			t.Errorf("%s: %v (%T), want a RequestError", c.name, err, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") || strings.Count(strings.TrimSuffix(msg, "."), ". ") > 0 {
			t.Errorf("%s: %q; want one sentence containing %q", c.name, msg, c.want)
		}
		t.Logf("%s: %s", c.name, msg)
		if _, err := os.Stat(c.req.Output); err == nil {
			t.Errorf("%s: an output was written", c.name)
		}
	}
}

// TestQueueCancelDuringDenoise cancels a queued render at its first denoise
// step: the output path stays empty, the history says canceled, and the
// next job renders normally.
func TestQueueCancelDuringDenoise(t *testing.T) {
	rd := newRenderer(t)
	h, err := OpenHistory(filepath.Join(t.TempDir(), "history"))
	if err != nil {
		t.Fatal(err)
	}
	// The first job to reach a denoise step is the slow one (jobs run in
	// submission order); observe must not block, so the cancel runs aside.
	var q *Queue
	var once sync.Once
	q = NewQueue(h, rd.Render, func(ev JobEvent) {
		if ev.Event != nil && ev.Event.Phase == engine.PhaseDenoise && ev.Event.Step == 1 {
			once.Do(func() { go q.Cancel(ev.JobID) })
		}
	})
	defer q.Close()
	slow := tinyRequest(t, "canceled.mp4")
	slow.Steps = 200
	next := tinyRequest(t, "next.mp4")
	first, err := q.Submit(slow)
	if err != nil {
		t.Fatal(err)
	}
	second, err := q.Submit(next)
	if err != nil {
		t.Fatal(err)
	}
	e := waitStatusLong(t, h, first, StatusCanceled)
	done := waitStatusLong(t, h, second, StatusDone)
	// The history keeps what ran: the plan and the engine's stats.
	var kept struct {
		Task    string `json:"task"`
		Verdict string `json:"verdict"`
	}
	var stats struct {
		Rows int `json:"rows"`
	}
	if err := json.Unmarshal(done.Plan, &kept); err != nil || kept.Task != "t2va" || kept.Verdict != "fits" {
		t.Errorf("history plan %s (%v), want a fitting t2va plan", done.Plan, err)
	}
	if err := json.Unmarshal(done.Stats, &stats); err != nil || stats.Rows <= 0 {
		t.Errorf("history stats %s (%v), want the DiT rows", done.Stats, err)
	}
	if e.Plan == nil {
		t.Error("the canceled job's plan was not recorded")
	}
	if _, err := os.Stat(slow.Output); !os.IsNotExist(err) {
		t.Errorf("canceled job left %s (%v)", slow.Output, err)
	}
	if left := tempFiles(t, filepath.Dir(slow.Output)); len(left) > 0 {
		t.Errorf("canceled job left temp files %v", left)
	}
	if e.Phases["denoise"] <= 0 {
		t.Errorf("canceled entry %+v has no denoise time", e)
	}
	checkMP4(t, next.Output, 64, 64, 22)
}

func waitStatusLong(t *testing.T, h *History, id string, want JobStatus) Entry {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if e, err := h.Get(id); err == nil && (e.Status == want || e.Status == StatusFailed || e.Status == StatusDone) {
			if e.Status != want {
				t.Fatalf("job %s: %s: %s", id, e.Status, e.Error)
			}
			return e
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("job %s did not reach %s", id, want)
	return Entry{}
}

func tempFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestKillMidRender runs `h3studio render --progress json` as a child
// process and SIGKILLs it, once in the denoise loop and once while frames
// are streaming into FFmpeg. Each time the history stays readable (the job
// reported interrupted) and nothing is at the output path; the temporary
// MP4 of the second kill is what the next start sweeps.
func TestKillMidRender(t *testing.T) {
	needFFmpeg(t)
	for _, at := range []struct {
		phase string
		step  int
	}{{"denoise", 3}, {"decode", 2}} {
		dir := t.TempDir()
		out := filepath.Join(dir, "killed.mp4")
		hist := filepath.Join(dir, "history")
		killChild(t, syscall.SIGKILL, at.phase, at.step, "render", "-d", TinyModel, "-p", "a fox", "--width", "64", "--height", "64", "--steps", "40",
			"--threads", "1", "--progress", "json", "--history", hist, "-o", out)
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: killed render left %s (%v)", at.phase, out, err)
		}
		h, err := OpenHistory(hist)
		if err != nil {
			t.Fatal(err)
		}
		list, err := h.List()
		if err != nil || len(list) != 1 {
			t.Fatalf("%s: history after the kill: %d entries, %v", at.phase, len(list), err)
		}
		if list[0].Status != StatusInterrupted || list[0].Output != out {
			t.Errorf("%s: history entry %+v; want the job interrupted", at.phase, list[0])
		}
		left := tempFiles(t, dir)
		swept := sweepInterrupted(h, 0)
		t.Logf("killed in %s: left %v, swept %d", at.phase, left, swept)
		if after := tempFiles(t, dir); len(after) != 1 || after[0] != "history" {
			t.Errorf("%s: after the sweep the folder holds %v; want only the history", at.phase, after)
		}
		if at.phase == "decode" && swept == 0 {
			t.Errorf("a kill during the decode left no temporary MP4 to sweep (%v)", left)
		}
	}
}

// killChild runs the test binary as h3studio with args, sends it sig at
// the given progress event and returns its exit status (-1 when killed).
func killChild(t *testing.T, sig syscall.Signal, phase string, step int, args ...string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1", "XDG_CACHE_HOME="+e2eCache(t), "HOME="+e2eCache(t))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		var ev jsonEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if ev.Phase == phase && ev.Kind == "progress" && ev.Step >= step {
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			killed = true
			break
		}
	}
	go io.Copy(io.Discard, stdout) // an interrupted child still reports its result
	err = cmd.Wait()
	if !killed {
		t.Fatalf("the child ended before %s step %d: %v", phase, step, err)
	}
	return cmd.ProcessState.ExitCode()
}

// TestInterruptExitsCanceled sends Ctrl-C (SIGINT) during the denoise: the
// job is canceled at the next step, the process exits 4, the history says
// canceled and nothing is written.
func TestInterruptExitsCanceled(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "interrupted.mp4")
	hist := filepath.Join(dir, "history")
	code := killChild(t, syscall.SIGINT, "denoise", 2, "render", "-d", TinyModel, "-p", "a fox", "--width", "64", "--height", "64", "--steps", "200",
		"--threads", "1", "--progress", "json", "--history", hist, "-o", out)
	if code != ExitCanceled {
		t.Errorf("exit status %d after Ctrl-C, want %d", code, ExitCanceled)
	}
	if after := tempFiles(t, dir); len(after) != 1 || after[0] != "history" {
		t.Errorf("after Ctrl-C the folder holds %v; want only the history", after)
	}
	h, err := OpenHistory(hist)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := h.List(); err != nil || len(list) != 1 || list[0].Status != StatusCanceled {
		t.Errorf("history %+v (%v); want one canceled job", list, err)
	}
}

// TestRenderExitCodes runs the CLI in-process: a bad request exits 2 with
// one line, a fitting one 0 with JSON events ending in a result line.
func TestRenderExitCodes(t *testing.T) {
	needFFmpeg(t)
	t.Setenv("XDG_CACHE_HOME", e2eCache(t))
	t.Setenv("HOME", e2eCache(t))
	dir := t.TempDir()
	var so, se strings.Builder
	if code := Main([]string{"render", "-d", TinyModel, "-p", "x", "--width", "500", "-o", filepath.Join(dir, "x.mp4")}, &so, &se); code != ExitBadRequest {
		t.Errorf("width 500: exit %d (%s), want %d", code, se.String(), ExitBadRequest)
	}
	var refused strings.Builder
	if code := Main([]string{"render", "-d", TinyModel, "-p", "x", "--width", "64", "--height", "64", "--memory-gb", "0.05", "-o", filepath.Join(dir, "x.mp4")}, &so, &refused); code != ExitRefused || !strings.Contains(refused.String(), "budget") {
		t.Errorf("0.05 GB budget: exit %d (%s), want %d with the planner's reason", code, refused.String(), ExitRefused)
	}
	if strings.Count(strings.TrimSpace(se.String()), "\n") != 0 {
		t.Errorf("error output is not one line: %q", se.String())
	}
	so.Reset()
	se.Reset()
	out := filepath.Join(dir, "ok.mp4")
	code := Main([]string{"render", "-d", TinyModel, "-p", "x", "--width", "64", "--height", "64", "--steps", "2", "--threads", "1",
		"--progress", "json", "--history", filepath.Join(dir, "h"), "-o", out}, &so, &se)
	if code != ExitDone {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	lines := strings.Split(strings.TrimSpace(so.String()), "\n")
	var last jsonEvent
	for _, l := range lines {
		if err := json.Unmarshal([]byte(l), &last); err != nil {
			t.Fatalf("not one JSON event per line: %q", l)
		}
	}
	if last.Kind != "result" || last.Status != "done" || last.Output != out {
		t.Errorf("last event %+v", last)
	}
	checkMP4(t, out, 64, 64, 22)
}
