package app

// End-to-end tests: real requests through Renderer (probe, plan, engine on
// the tiny snapshot, media mux) into MP4s that ffprobe and ffmpeg, not our
// code, then describe. Canvases are 64x64 with two denoise steps so the
// whole file stays well under a minute on two shared cores; bigger
// variants are under the long tag (e2e_long_test.go).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"h3studio/engine"
	"h3studio/engine/plan"
)

// childEnv makes the test binary act as h3studio (TestMain), so the kill
// test can run the CLI as a real subprocess without building the app.
const childEnv = "H3STUDIO_E2E_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	if sharedCache != "" {
		os.RemoveAll(sharedCache)
	}
	os.Exit(code)
}

var (
	sharedCache string
	cacheOnce   sync.Once
)

// e2eCache is one tiny-model cache folder for every test of the run.
func e2eCache(t *testing.T) string {
	t.Helper()
	cacheOnce.Do(func() {
		d, err := os.MkdirTemp("", "h3studio-e2e-")
		if err != nil {
			t.Fatal(err)
		}
		sharedCache = d
	})
	return sharedCache
}

func needFFmpeg(t *testing.T) {
	t.Helper()
	for _, b := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed (make test installs it)", b)
		}
	}
}

// newRenderer is a renderer on the tiny model with one CPU thread: ggml's
// threads spin while they wait, which on a shared 2-core machine costs
// more than it gains at these sizes.
func newRenderer(t *testing.T) *Renderer {
	t.Helper()
	needFFmpeg(t)
	rd := &Renderer{CacheDir: e2eCache(t), DefaultModel: TinyModel, Threads: 1, Logger: slog.New(slog.DiscardHandler)}
	t.Cleanup(rd.Close)
	return rd
}

// events records a render's events.
type events struct {
	mu  sync.Mutex
	evs []engine.Event
}

func (e *events) sink(ev engine.Event) { e.mu.Lock(); e.evs = append(e.evs, ev); e.mu.Unlock() }

func (e *events) find(kind engine.EventKind, phase engine.Phase) []engine.Event {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []engine.Event
	for _, ev := range e.evs {
		if ev.Kind == kind && (phase == "" || ev.Phase == phase) {
			out = append(out, ev)
		}
	}
	return out
}

// probeReport is what ffprobe says about an output.
type probeReport struct {
	Streams []struct {
		CodecType    string `json:"codec_type"`
		CodecName    string `json:"codec_name"`
		AvgFrameRate string `json:"avg_frame_rate"`
		Width        int    `json:"width"`
		Height       int    `json:"height"`
		NbReadFrames string `json:"nb_read_frames"`
		Duration     string `json:"duration"`
		SampleRate   string `json:"sample_rate"`
		Channels     int    `json:"channels"`
	} `json:"streams"`
}

// checkMP4 asks ffprobe (counting decoded frames) for the streams of path
// and checks the product's contract: H.264 video at 24 fps with exactly
// frames frames on w x h, stereo AAC whose duration equals the video's
// within one frame.
func checkMP4(t *testing.T, path string, w, h, frames int) {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-count_frames", "-show_entries",
		"stream=codec_type,codec_name,avg_frame_rate,width,height,nb_read_frames,duration,sample_rate,channels",
		"-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var rep probeReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	var vdur, adur float64
	var sawV, sawA bool
	for _, s := range rep.Streams {
		d, _ := strconv.ParseFloat(s.Duration, 64)
		switch s.CodecType {
		case "video":
			sawV = true
			vdur = d
			n, _ := strconv.Atoi(s.NbReadFrames)
			if s.CodecName != "h264" || s.AvgFrameRate != "24/1" || n != frames || s.Width != w || s.Height != h {
				t.Errorf("%s video: %s %s fps, %d frames, %dx%d; want h264 24/1, %d frames, %dx%d",
					path, s.CodecName, s.AvgFrameRate, n, s.Width, s.Height, frames, w, h)
			}
		case "audio":
			sawA = true
			adur = d
			if s.CodecName != "aac" || s.Channels != 2 {
				t.Errorf("%s audio: %s with %d channels; want aac stereo", path, s.CodecName, s.Channels)
			}
		}
	}
	if !sawV || !sawA || len(rep.Streams) != 2 {
		t.Fatalf("%s: streams %+v; want one video and one audio", path, rep.Streams)
	}
	want := float64(frames) / 24
	if math.Abs(vdur-want) > 1e-3 || math.Abs(adur-vdur) > 1.0/24 {
		t.Errorf("%s: video %.4f s (want %.4f), audio %.4f s: not within one frame", path, vdur, want, adur)
	}
	t.Logf("%s: ffprobe: h264 %dx%d, %d frames at 24 fps, %.4f s video, %.4f s aac", filepath.Base(path), w, h, frames, vdur, adur)
}

// decodedFrames is the MP4's video as ffmpeg decodes it to RGB.
func decodedFrames(t *testing.T, path string) []byte {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-v", "error", "-nostdin", "-i", path, "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", "rgb24", "-").Output()
	if err != nil {
		t.Fatalf("ffmpeg decode %s: %v", path, err)
	}
	return out
}

// render runs one request and logs the e2e table row.
func render(t *testing.T, rd *Renderer, r Request) (*Job, *events) {
	t.Helper()
	ctx := context.Background()
	job, err := rd.Prepare(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	ev := &events{}
	out, err := job.Run(ctx, ev.sink)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	logRow(t, job, st.Size())
	return job, ev
}

// logRow prints the closing note's e2e table row: request, rows, time per
// phase, output size.
func logRow(t *testing.T, j *Job, size int64) {
	var ph []string
	for _, p := range j.Stats.Phases {
		ph = append(ph, fmt.Sprintf("%s %d ms", p.Phase, p.Elapsed.Milliseconds()))
	}
	var parts []string
	for _, p := range j.Stats.Parts {
		parts = append(parts, fmt.Sprintf("%s %d ms", p.Phase, p.Elapsed.Milliseconds()))
	}
	t.Logf("e2e | %s %s %d frames, %d steps | %d rows (%d Qwen) | %s | %d bytes | parts: %s",
		j.Plan.Task, j.Plan.RenderCanvas, j.Plan.Frames, j.Request.Steps, j.Stats.Rows, j.Stats.TextTokens, strings.Join(ph, ", "), size, strings.Join(parts, ", "))
}

// tinyRequest sizes references by the cheap named options (the output's
// area for pictures, clips never enlarged): these tests check the app's
// plumbing, and the official sizing's 2048-pixel pictures and 768-class
// clips take minutes to encode on a CPU (the engine's parity test runs
// them).
func tinyRequest(t *testing.T, out string) Request {
	return Request{Prompt: "a red fox runs through fresh snow at dawn", Width: 64, Height: 64, Frames: 22, Steps: 2,
		Seed: 7, Output: filepath.Join(t.TempDir(), out), RefImageSize: "match", RefClipSize: "source"}
}

func TestRenderT2VA(t *testing.T) {
	rd := newRenderer(t)
	r := tinyRequest(t, "t2va.mp4")
	r.FramesDir = filepath.Join(t.TempDir(), "frames")
	job, ev := render(t, rd, r)
	checkMP4(t, r.Output, 64, 64, 22)
	if pngs, err := filepath.Glob(filepath.Join(r.FramesDir, "*.png")); err != nil || len(pngs) != 22 {
		t.Errorf("--frames-dir holds %d PNGs (%v), want 22", len(pngs), err)
	}
	if job.Plan.Task != "t2va" {
		t.Errorf("task %s, want t2va", job.Plan.Task)
	}
	steps := ev.find(engine.EventProgress, engine.PhaseDenoise)
	if len(steps) != 2 || steps[1].Step != 2 || steps[1].Total != 2 {
		t.Errorf("denoise events %+v; want steps 1 and 2 of 2", steps)
	}
	var order []engine.Phase
	for _, e := range ev.find(engine.EventStart, "") {
		order = append(order, e.Phase)
	}
	if want := "[references encode denoise decode mux]"; fmt.Sprint(order) != want {
		t.Errorf("phases %v, want %s", order, want)
	}
	if done := ev.find(engine.EventDone, ""); len(done) != 1 || done[0].Stats.Rows != job.Stats.Rows || job.Stats.Rows <= 0 {
		t.Errorf("done events %+v", done)
	}
}

func TestRenderFL2VA(t *testing.T) {
	rd := newRenderer(t)
	fx := fixtures(t)
	r := tinyRequest(t, "fl2va.mp4")
	r.FirstFrame, r.LastFrame = fx.image1, fx.image2
	job, _ := render(t, rd, r)
	checkMP4(t, r.Output, 64, 64, 22)
	// Two anchors on the 64x64 target: one latent frame of 2x2 rows each.
	if job.Plan.Task != "fl2va" || job.Plan.DiTRows.Conditions != 8 {
		t.Errorf("task %s with %d condition rows; want fl2va with 8", job.Plan.Task, job.Plan.DiTRows.Conditions)
	}
}

// ref2va is the Ref2VA request of the done-when list: two images, a clip
// with its soundtrack and a standalone audio clip. The soundtrack must
// cover 2 s, so the output is 56 frames (2.33 s).
func ref2va(t *testing.T, out string) Request {
	fx := fixtures(t)
	r := tinyRequest(t, out)
	r.Frames = 56
	r.References = []Reference{
		{Kind: RefImage, Path: fx.image1},
		{Kind: RefVideoAudio, Path: fx.clip},
		{Kind: RefImage, Path: fx.image2},
		{Kind: RefAudio, Path: fx.audio},
	}
	return r
}

func TestRenderRef2VA(t *testing.T) {
	rd := newRenderer(t)
	r := ref2va(t, "ref2va.mp4")
	job, _ := render(t, rd, r)
	checkMP4(t, r.Output, 64, 64, 56)
	p := job.Plan
	if p.Task != "ref2va" || len(p.References) != 4 || p.DiTRows.References == 0 {
		t.Fatalf("plan %s with %d references, %d reference rows", p.Task, len(p.References), p.DiTRows.References)
	}
	if len(p.Decisions) != 0 {
		t.Errorf("an unconstrained request was changed: %+v", p.Decisions)
	}
	// Another seed re-runs only the denoise and the decode: the references'
	// latents and the text conditioning come from the engine's cache.
	again := r
	again.Seed, again.Steps, again.Output = 8, 1, filepath.Join(t.TempDir(), "again.mp4")
	j2, _ := render(t, rd, again)
	if got := fmt.Sprint(j2.Stats.Cached); got != "[input 1 input 2 input 3 input 4 text]" {
		t.Errorf("second render cached %s; want all four inputs and the text", got)
	}
	checkMP4(t, again.Output, 64, 64, 56)
}

// TestRenderFitted renders the Ref2VA request under a Qwen sequence limit
// that the planner can only meet by pooling the clip's vision tokens and
// down-scaling the images; its decisions must reach the events and the
// clip must still be complete.
func TestRenderFitted(t *testing.T) {
	rd := newRenderer(t)
	r := ref2va(t, "fitted.mp4")
	// Images at their own size (up to a 2048 px short edge): the fitter's
	// first lever is to size them to the output instead.
	r.RefImageSize = "max"
	matched := r
	matched.RefImageSize = "match"
	mp, err := rd.Prepare(context.Background(), matched)
	if err != nil {
		t.Fatal(err)
	}
	free, err := rd.Prepare(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	// Below what matching the images gives: the clip must be pooled too.
	rd.PlanOptions = plan.Options{MaxSequence: mp.Plan.TextTokens.Total - 8}
	job, ev := render(t, rd, r)
	checkMP4(t, r.Output, 64, 64, 56)
	kinds := map[string]bool{}
	for _, d := range job.Plan.Decisions {
		kinds[d.Kind] = true
	}
	msgs := ev.find(engine.EventDecision, "")
	for _, m := range msgs {
		t.Logf("decision event: %s", m.Message)
	}
	t.Logf("Qwen sequence %d (images matched: %d) -> %d under limit %d", free.Plan.TextTokens.Total, mp.Plan.TextTokens.Total, job.Plan.TextTokens.Total, rd.PlanOptions.MaxSequence)
	if job.Plan.TextTokens.Total > rd.PlanOptions.MaxSequence || len(msgs) != len(job.Plan.Decisions) || len(msgs) == 0 {
		t.Errorf("%d Qwen tokens under a limit of %d, %d decision events for %d decisions", job.Plan.TextTokens.Total, rd.PlanOptions.MaxSequence, len(msgs), len(job.Plan.Decisions))
	}
	if !kinds[plan.DecidePoolTemporal] && !kinds[plan.DecidePoolSpatial] || !kinds[plan.DecideImageCap] && !kinds[plan.DecideImagePolicy] {
		t.Errorf("decisions %v; want clip pooling and image down-scaling", kinds)
	}
}

// TestRenderDeterministic renders one request twice and with another seed:
// ffmpeg's decode of the first two must be byte-identical, the third
// different. The second render reuses the cached text conditioning.
func TestRenderDeterministic(t *testing.T) {
	rd := newRenderer(t)
	a := tinyRequest(t, "a.mp4")
	b := a
	b.Output = filepath.Join(t.TempDir(), "b.mp4")
	c := a
	c.Output, c.Seed = filepath.Join(t.TempDir(), "c.mp4"), 8
	render(t, rd, a)
	jb, _ := render(t, rd, b)
	render(t, rd, c)
	fa, fb, fc := decodedFrames(t, a.Output), decodedFrames(t, b.Output), decodedFrames(t, c.Output)
	if len(fa) != 64*64*3*22 {
		t.Fatalf("decoded %d bytes, want 22 frames of 64x64 RGB", len(fa))
	}
	if !bytes.Equal(fa, fb) {
		t.Errorf("seed 7 twice: frames differ (sha256 %x vs %x)", sha256.Sum256(fa), sha256.Sum256(fb))
	}
	if bytes.Equal(fa, fc) {
		t.Error("seeds 7 and 8 gave identical frames")
	}
	if fmt.Sprint(jb.Stats.Cached) != "[text]" {
		t.Errorf("second render cached %v; want the text conditioning", jb.Stats.Cached)
	}
}

// TestRenderAggressivePreset renders with the aggressive preset: the model
// runs on a smaller canvas (320/512 of the side) whose frames are scaled up
// to the output, and velocity reuse 3 cuts 20 steps to 8 forwards.
func TestRenderAggressivePreset(t *testing.T) {
	rd := newRenderer(t)
	r := tinyRequest(t, "aggressive.mp4")
	r.Width, r.Height, r.Steps, r.Preset = 128, 128, 0, "aggressive"
	job, _ := render(t, rd, r)
	checkMP4(t, r.Output, 128, 128, 22)
	if rc := job.Plan.RenderCanvas; rc.Width != 64 || rc.Height != 64 {
		t.Errorf("render canvas %s, want 64x64", rc)
	}
	if job.Request.Steps != 20 || job.Stats.Forwards != plan.Forwards(20, 3) {
		t.Errorf("%d steps, %d forwards; want 20 steps, %d forwards", job.Request.Steps, job.Stats.Forwards, plan.Forwards(20, 3))
	}
	if _, err := ReleaseDefaults.ApplyPreset(Request{Preset: "turbo"}); err == nil {
		t.Error("an unknown preset was accepted")
	}
}
