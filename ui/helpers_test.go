package ui

import (
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"h3studio/app"
	"h3studio/media"
)

// cacheDir holds the generated tiny model, shared by every test in the run.
var cacheDir string

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "h3studio-ui-test-")
	if err != nil {
		panic(err)
	}
	cacheDir = d
	code := runTests(m)
	os.RemoveAll(d)
	os.Exit(code)
}

// runTests runs the tests; the key-to-pixel benchmark (xvfb tag) replaces
// it to run them beside the real GLFW driver, whose event loop must own
// the main goroutine.
var runTests = (*testing.M).Run

// serial is the tests' UI goroutine: one goroutine runs every update in
// order, as Fyne's event loop does, so workers and the test never touch
// widgets at the same time (Fyne's test driver would run fyne.Do inline).
type serial struct {
	mu     sync.Mutex
	closed bool
	work   chan func()
}

func newSerial(t testing.TB) *serial {
	s := &serial{work: make(chan func(), 1024)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for f := range s.work {
			f()
		}
	}()
	t.Cleanup(func() {
		s.mu.Lock()
		s.closed = true
		close(s.work)
		s.mu.Unlock()
		<-done
	})
	return s
}

// Do queues f; after the test ends, late updates from background work
// (a probe finishing, a debounce timer) are dropped as a closed window's are.
func (s *serial) Do(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.work <- f
	}
}

func (s *serial) DoAndWait(f func()) {
	done := make(chan struct{})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.work <- func() {
		defer close(done)
		f()
	}
	s.mu.Unlock()
	<-done
}

func (s *serial) exec() Executor { return Executor{Do: s.Do, DoAndWait: s.DoAndWait} }

// harness is a studio on the test driver with the real core behind it:
// the queue, the history and the renderer on the embedded tiny model.
type harness struct {
	t   testing.TB
	ui  *serial
	s   *Studio
	rd  *app.Renderer
	out string
}

// machine is a fixed profile so plans (memory budget, time) do not
// depend on the machine the tests run on.
const machine = "m5-max-128"

func newHarness(t testing.TB) *harness {
	t.Helper()
	return newHarnessOn(t, app.TinyModel)
}

// newHarnessOn is a harness whose requests without a model folder use
// defaultModel (the Renderer's DefaultModel), its defaults in the editor.
func newHarnessOn(t testing.TB, defaultModel string) *harness {
	t.Helper()
	a := test.NewTempApp(t)
	hist, err := app.OpenHistory(filepath.Join(t.TempDir(), "history"))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, ui: newSerial(t), out: t.TempDir()}
	h.rd = &app.Renderer{CacheDir: cacheDir, DefaultModel: defaultModel, Preview: true}
	cfg := Config{Exec: h.ui.exec(), Render: h.rd.Render, Plan: PlanWith(h.rd), History: hist,
		OutputDir: h.out, Machine: machine, PlanDelay: 20 * time.Millisecond, SetMemoryGB: h.rd.SetMemoryGB, Memory: h.rd.MemoryNow, LoRACoverage: h.rd.LoRACoverage, Defaults: h.rd.Defaults,
		// The cheap named sizes: the official ones take minutes to encode
		// on a CPU, and these tests check the window, not the sizing.
		RefImageSize: "match", RefClipSize: "source"}
	h.ui.DoAndWait(func() {
		h.s = NewStudio(a, cfg)
		h.s.Window().Show()
	})
	t.Cleanup(func() {
		h.run(h.s.Close)
		h.rd.Close()
	})
	return h
}

// run executes f on the UI goroutine and waits for it.
func (h *harness) run(f func()) { h.ui.DoAndWait(f) }

// waitFor polls cond on the UI goroutine until it holds.
func (h *harness) waitFor(what string, timeout time.Duration, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		h.run(func() { ok = cond() })
		if ok {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// settled reports whether every file is probed and the shown plan answers
// the latest edit.
// status is a job's status as the queue the window shows knows it.
func (h *harness) status(id string) app.JobStatus {
	j, _ := h.s.queue.Job(id)
	return j.Status
}

func (h *harness) settled() bool { return h.s.loading == 0 && h.s.planned == h.s.edits }

func (h *harness) waitSettled() {
	h.t.Helper()
	h.waitFor("the plan to settle", 60*time.Second, h.settled)
}

// drop sends paths through the window's drop handler, as a Finder drop.
func (h *harness) drop(paths ...string) {
	var uris []fyne.URI
	for _, p := range paths {
		uris = append(uris, storage.NewFileURI(p))
	}
	h.run(func() { h.s.OnDropped(fyne.NewPos(400, 300), uris) })
}

// fixtures writes a still, a clip with a soundtrack and an audio file.
func fixtures(t testing.TB) (still, clip, voice string) {
	t.Helper()
	dir := t.TempDir()
	still = filepath.Join(dir, "still.png")
	img := image.NewNRGBA(image.Rect(0, 0, 640, 480))
	for y := 0; y < 480; y++ {
		for x := 0; x < 640; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / 639), uint8(y * 255 / 479), 128, 255})
		}
	}
	f, err := os.Create(still)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	clip = filepath.Join(dir, "clip.mp4")
	if err := media.EncodeMP4(t.Context(), clip, media.EncodeOptions{Width: 320, Height: 240, Audio: tone(2)}, numberedFrames(48, 320, 240)); err != nil {
		t.Fatal(err)
	}
	voice = filepath.Join(dir, "voice.wav")
	if err := media.WriteWAV(voice, tone(3)); err != nil {
		t.Fatal(err)
	}
	return still, clip, voice
}

// tone is a 440 Hz stereo sine of the given length at H3's audio rate.
func tone(seconds float64) media.PCM {
	n := int(seconds * media.SampleRate)
	p := media.PCM{Rate: media.SampleRate, Channels: 2, Samples: make([]float32, 2*n)}
	for i := 0; i < n; i++ {
		v := float32(0.5 * math.Sin(2*math.Pi*440*float64(i)/media.SampleRate))
		p.Samples[2*i], p.Samples[2*i+1] = v, v
	}
	return p
}

// numberedFrames makes frames that differ clearly from their neighbours:
// frame i is a flat gray of level 5*i with a white bar at column 6*i, so a
// frame's index can be read back from its pixels after compression.
func numberedFrames(n, w, h int) []media.Frame {
	var out []media.Frame
	for i := 0; i < n; i++ {
		f := media.NewFrame(w, h)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				v := byte(5 * i)
				if x/6 == i {
					v = 255
				}
				o := 3 * (y*w + x)
				f.Pix[o], f.Pix[o+1], f.Pix[o+2] = v, v, v
			}
		}
		out = append(out, f)
	}
	return out
}

func decodePNG(r io.Reader) (image.Image, error) { return png.Decode(r) }

func writePNG(t testing.TB, path string, img image.Image) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// resizeNN scales img to w x h by nearest neighbour.
func resizeNN(img image.Image, w, h int) image.Image {
	b := img.Bounds()
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			out.Set(x, y, img.At(b.Min.X+x*b.Dx()/w, b.Min.Y+y*b.Dy()/h))
		}
	}
	return out
}

// children are what a test walk descends into: a container's objects, a
// widget's live renderer's objects.
func children(o fyne.CanvasObject) []fyne.CanvasObject {
	switch v := o.(type) {
	case *fyne.Container:
		return v.Objects
	case fyne.Widget:
		return test.WidgetRenderer(v).Objects()
	}
	return nil
}
