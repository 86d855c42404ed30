package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"h3studio/engine"
	"h3studio/engine/plan"
	"h3studio/media"
)

// calibrationVersion changes when the work units or the calibration
// requests change, so old measurements are not fitted to new units.
const calibrationVersion = 4

// Calibration is what a short run of the built-in demo model measured on
// this machine: per phase, the planned work and the wall time. It is stored in
// the cache folder under the binary's version and the machine's name, so
// a new build or another machine measures again.
type Calibration struct {
	Key     string                   `json:"key"`
	Samples map[string][]plan.Sample `json:"samples"`
}

// calibrationKey names the binary and the machine a calibration is for.
func calibrationKey(machine string) string {
	return fmt.Sprintf("v%d-%s-%s-%s-%s", calibrationVersion, Version, runtime.GOOS, runtime.GOARCH, machine)
}

func calibrationPath(cacheDir, machine string) string {
	return filepath.Join(cacheDir, "calibration", calibrationKey(machine)+".json")
}

// LoadCalibration reads the calibration of this binary on the named
// machine; (nil, nil) when there is none yet.
func LoadCalibration(cacheDir, machine string) (*Calibration, error) {
	data, err := os.ReadFile(calibrationPath(cacheDir, machine))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	var c Calibration
	if err := json.Unmarshal(data, &c); err != nil || c.Key != calibrationKey(machine) {
		return nil, nil // damaged or foreign: measure again
	}
	return &c, nil
}

// calibrationRequests are a warm-up and two small renders of the built-in
// demo model whose work differs in every phase (canvas, frames, steps,
// pictures), so a line through their two points separates each phase's
// fixed cost from its rate. The demo model is the one a request naming no
// model gets, so a first render is priced by its own speed: measured on
// the random tiny model, whose transformer is too small to keep the CPU's
// matmuls busy and whose video VAE is narrower, the window promised 14.8 s
// for the demo's 7 s default render and 15 s of references for a phone
// clip's 28 (this machine, the same evening).
func calibrationRequests(dir string) ([]Request, error) {
	var pics []string
	for i, side := range []int{96, 192, 64} {
		p := filepath.Join(dir, fmt.Sprintf("picture%d.png", i+1))
		if err := writeTestPicture(p, side); err != nil {
			return nil, err
		}
		pics = append(pics, p)
	}
	clip := filepath.Join(dir, "clip.mp4")
	if err := writeTestClip(clip, 64, calibrationClipFrames); err != nil {
		return nil, err
	}
	base := Request{Model: DemoModel, Prompt: "a red fox runs through fresh snow at dawn", Seed: 1, RefImageSize: "match", RefClipSize: "source"}
	a, b := base, base
	a.Width, a.Height, a.Frames, a.Steps = 64, 64, 22, 1
	a.References = []Reference{{Kind: RefImage, Path: pics[0]}}
	a.Output = filepath.Join(dir, "a.mp4")
	b.Width, b.Height, b.Frames, b.Steps = 128, 128, 39, 3
	b.Prompt += ", the camera follows low"
	// b's clip measures the clip rate (one encoder chunk at 64x64), its
	// pictures the rest of the references phase.
	b.References = []Reference{{Kind: RefImage, Path: pics[0]}, {Kind: RefImage, Path: pics[1]}, {Kind: RefVideo, Path: clip}}
	b.Output = filepath.Join(dir, "b.mp4")
	// The warm-up shares no input with the measured renders, so neither
	// finds its text or pictures in the engine's cache.
	w := a
	w.Prompt, w.References, w.Output = "warm-up", []Reference{{Kind: RefImage, Path: pics[2]}}, filepath.Join(dir, "w.mp4")
	return []Request{w, a, b}, nil
}

// calibrationClipFrames is the calibration clip's length: one 17-frame
// chunk of the video VAE encoder.
const calibrationClipFrames = 17

// writeTestClip writes a silent side x side clip of n moving-gradient
// frames at 24 fps.
func writeTestClip(path string, side, n int) error {
	frames := make([]media.Frame, n)
	for i := range frames {
		f := media.NewFrame(side, side)
		for y := range side {
			for x := range side {
				o := 3 * (y*side + x)
				f.Pix[o], f.Pix[o+1], f.Pix[o+2] = uint8((x+4*i)*255/side), uint8(y*255/side), 128
			}
		}
		frames[i] = f
	}
	return media.EncodeMP4(context.Background(), path, media.EncodeOptions{Width: side, Height: side}, frames)
}

// writeTestPicture writes a side x side gradient PNG.
func writeTestPicture(path string, side int) error {
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	for y := range side {
		for x := range side {
			img.Set(x, y, color.RGBA{uint8(x * 255 / side), uint8(y * 255 / side), 128, 255})
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Calibrate measures this machine with the demo model: a warm-up render
// (discarded: it pays one-time costs such as unpacking the model), then
// the two calibration requests, and stores the samples in the cache
// folder. It takes a few seconds and reads no user file.
func (rd *Renderer) Calibrate(ctx context.Context, machine string) (*Calibration, error) {
	mc, err := LookupMachine(machine)
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	dir, err := os.MkdirTemp("", "h3studio-calibrate-")
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	defer os.RemoveAll(dir)
	reqs, err := calibrationRequests(dir)
	if err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	c := &Calibration{Key: calibrationKey(mc.Name), Samples: map[string][]plan.Sample{}}
	for i, r := range reqs {
		r.Machine = machine
		job, err := rd.Prepare(ctx, r)
		if err != nil {
			return nil, fmt.Errorf("calibration: %w", err)
		}
		if _, err := job.Run(ctx, nil); err != nil {
			return nil, fmt.Errorf("calibration: %w", err)
		}
		if i == 0 {
			continue
		}
		for ph, s := range phaseSamples(job.Plan.Time, phaseMillis(*job.Stats)) {
			c.Samples[ph] = append(c.Samples[ph], s)
		}
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	p := calibrationPath(rd.CacheDir, mc.Name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	if err := writeFileAtomic(p, data); err != nil {
		return nil, fmt.Errorf("calibration: %w", err)
	}
	return c, nil
}

// CalibrateOnce calibrates on the first start of this binary on this
// machine and does nothing once a calibration is stored; the window calls
// it in the background.
func (rd *Renderer) CalibrateOnce(ctx context.Context, machine string) error {
	mc, err := LookupMachine(machine)
	if err != nil {
		return err
	}
	if c, err := LoadCalibration(rd.CacheDir, mc.Name); c != nil || err != nil {
		return err
	}
	_, err = rd.Calibrate(ctx, machine)
	return err
}

// phaseSamples pairs a plan's per-phase work with measured milliseconds.
// A references phase with clips gives two samples, the clips' encode
// (ms[plan.TimeReferenceClips]) and the rest; without the clips' own time
// (an entry from before it was recorded) it gives none rather than one
// that mixes two rates.
func phaseSamples(t plan.Estimate, ms map[string]int64) map[string]plan.Sample {
	out := map[string]plan.Sample{}
	for _, pc := range t.Phases {
		v, ok := ms[pc.Phase]
		if !ok {
			continue
		}
		if pc.Phase == plan.TimeReferences && pc.ClipWork > 0 {
			c, ok := ms[plan.TimeReferenceClips]
			if !ok {
				continue
			}
			out[plan.TimeReferenceClips] = plan.Sample{Work: pc.ClipWork, Seconds: float64(c) / 1000}
			out[pc.Phase] = plan.Sample{Work: pc.Work - pc.ClipWork, Seconds: float64(max(v-c, 0)) / 1000}
			continue
		}
		out[pc.Phase] = plan.Sample{Work: pc.Work, Seconds: float64(v) / 1000}
	}
	return out
}

// historySamples are the finished jobs of one model (the request's Model
// field, "" for the default model), newest first, as samples per phase.
func historySamples(entries []Entry, model string, limit int) map[string][]plan.Sample {
	out := map[string][]plan.Sample{}
	n := 0
	for _, e := range entries {
		if e.Status != StatusDone || len(e.Plan) == 0 || len(e.Phases) == 0 || n >= limit {
			continue
		}
		r, err := e.DecodeRequest()
		if err != nil || !strings.EqualFold(r.Model, model) {
			continue
		}
		var p plan.Plan
		if err := json.Unmarshal(e.Plan, &p); err != nil {
			continue
		}
		n++
		for ph, s := range phaseSamples(p.Time, e.Phases) {
			out[ph] = append(out[ph], s)
		}
	}
	return out
}

// historyLimit is how many recent jobs refine the rates: enough to average
// out one slow run, few enough that a changed machine shows soon.
const historyLimit = 20

// FitRates turns measurements into the rates the planner prices with. A
// phase with samples from finished jobs of the model is fitted from those
// alone (the demo model's rates would misprice a larger model's
// transformers); other phases from the calibration.
func FitRates(c *Calibration, hist map[string][]plan.Sample) *plan.Rates {
	if c == nil && len(hist) == 0 {
		return nil
	}
	r := &plan.Rates{Source: plan.SourceCalibration, Phases: map[string]plan.Rate{}}
	for _, ph := range plan.RatedPhases {
		if s := hist[ph]; len(s) > 0 {
			r.Phases[ph] = plan.FitRate(s)
			r.Source = plan.SourceHistory
		} else if c != nil {
			r.Phases[ph] = plan.FitRate(c.Samples[ph])
		}
	}
	return r
}

// phaseMillis is a run's phase times as the history records them, with
// the parts the planner prices on their own (the reference clips).
func phaseMillis(st engine.Stats) map[string]int64 {
	out := map[string]int64{}
	for _, t := range st.Phases {
		out[string(t.Phase)] = t.Elapsed.Milliseconds()
	}
	for _, t := range st.Parts {
		if string(t.Phase) == plan.TimeReferenceClips {
			out[plan.TimeReferenceClips] = t.Elapsed.Milliseconds()
		}
	}
	return out
}

// rates are the measured rates for a request's model on the machine:
// this binary's calibration and the history's finished jobs.
func (rd *Renderer) rates(machine, model string) *plan.Rates {
	if rd.CacheDir == "" {
		return nil
	}
	c, err := LoadCalibration(rd.CacheDir, machine)
	if err != nil && rd.Logger != nil {
		rd.Logger.Warn("app: calibration unreadable", "err", err)
	}
	var hist map[string][]plan.Sample
	if rd.HistoryDir != "" {
		if h, err := (&History{dir: rd.HistoryDir}).List(); err == nil {
			hist = historySamples(h, model, historyLimit)
		}
	}
	return FitRates(c, hist)
}
