package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"h3studio/app"
	"h3studio/engine"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/engine/weights/safetensors"
)

// TestEndToEndParity runs Engine.Generate on the raw files of each case in
// tools/fixtures/e2e/inputs (the production MediaReader decodes them) and
// compares every stage with the official pipeline as
// tools/fixtures/e2e/gen.py ran it: SGLang's MiniMax-H3 stages, Hugging
// Face's Qwen3-VL processors and model, ComfyUI's DiT and VAEs, from the same
// initial noise (the engine draws torch's CPU normals, as the official
// pipeline does, so the seed alone reproduces them). Qwen ids and tags
// must match exactly; the hidden state, condition rows, every step's latents
// and the final latents within 1e-4 relative L2; the decoded frames and
// waveform within 1e-3.
func TestEndToEndParity(t *testing.T) {
	for _, name := range parityCases {
		t.Run(name, func(t *testing.T) { runParityCase(t, name) })
	}
}

const (
	parityDir       = "../tools/fixtures/e2e"
	latentTolerance = 1e-4
	decodeTolerance = 1e-3
)

// paritySpec is the request part of a fixture's "case" metadata.
type paritySpec struct {
	Name   string  `json:"name"`
	Prompt string  `json:"prompt"`
	Seed   int64   `json:"seed"`
	Steps  int     `json:"steps"`
	Frames int     `json:"frames"`
	Canvas [2]int  `json:"canvas"`
	First  string  `json:"first"`
	Last   string  `json:"last"`
	Refs   []refIn `json:"refs"`
	// ResizeMode is the reference-image sizing (SGLang's
	// reference_resize_mode: diffusers, match or max).
	ResizeMode string `json:"resize_mode"`
}

type refIn struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
}

// fixture is one case's reference tensors.
type fixture struct {
	f    *safetensors.File
	spec paritySpec
}

func openFixture(t *testing.T, name string) *fixture {
	t.Helper()
	return openFixtureFile(t, filepath.Join(parityDir, "testdata", name+".safetensors"))
}

func openFixtureFile(t *testing.T, path string) *fixture {
	t.Helper()
	f, err := safetensors.Open(path)
	if err != nil {
		t.Fatalf("fixture %s: %v (regenerate with tools/fixtures/e2e/run.sh on the GPU machine)", path, err)
	}
	t.Cleanup(func() { f.Close() })
	fx := &fixture{f: f}
	if err := json.Unmarshal([]byte(f.Metadata["case"]), &fx.spec); err != nil {
		t.Fatalf("fixture %s: case metadata: %v", path, err)
	}
	return fx
}

func (fx *fixture) floats(t *testing.T, name string) []float32 {
	t.Helper()
	tn, ok := fx.f.Tensor(name)
	if !ok {
		t.Fatalf("fixture has no tensor %s", name)
	}
	v, err := tn.Float32()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func (fx *fixture) ints(t *testing.T, name string) []int32 {
	t.Helper()
	tn, ok := fx.f.Tensor(name)
	if !ok || tn.DType != "I32" {
		t.Fatalf("fixture has no int32 tensor %s", name)
	}
	out := make([]int32, len(tn.Data)/4)
	for i := range out {
		b := tn.Data[4*i:]
		out[i] = int32(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
	}
	return out
}

func (fx *fixture) has(name string) bool { _, ok := fx.f.Tensor(name); return ok }

// request is the case as a creator would give it to the app.
func (fx *fixture) request() app.Request {
	in := func(p string) string {
		if p == "" {
			return ""
		}
		return filepath.Join(parityDir, "inputs", p)
	}
	r := app.Request{Prompt: fx.spec.Prompt, Seed: fx.spec.Seed, Steps: fx.spec.Steps, Frames: fx.spec.Frames,
		Width: fx.spec.Canvas[0], Height: fx.spec.Canvas[1], FirstFrame: in(fx.spec.First), LastFrame: in(fx.spec.Last),
		RefImageSize: fx.spec.ResizeMode}
	for _, ref := range fx.spec.Refs {
		if ref.Kind == "keyframe" { // the generator's record of an FL2VA anchor
			continue
		}
		r.References = append(r.References, app.Reference{Kind: ref.Kind, Path: in(ref.Path)})
	}
	return r.WithDefaults()
}

// capture records the engine's taps by name (copies: the engine reuses
// its buffers).
type capture struct {
	mu     sync.Mutex
	floats map[string][]float32
	ints   map[string][]int32
}

func (c *capture) tap(name string, index int, v any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := name
	if index >= 0 {
		key = fmt.Sprintf("%s.%d", name, index)
	}
	switch x := v.(type) {
	case []float32:
		c.floats[key] = append([]float32(nil), x...)
	case []int32:
		c.ints[key] = append([]int32(nil), x...)
	case []layout.Modality:
		s := make([]int32, len(x))
		for i, m := range x {
			s[i] = int32(m)
		}
		c.ints[key] = s
	case [][3]int:
		s := make([]int32, 3*len(x))
		for i, p := range x { // HF's [3][L] layout: t row, h row, w row
			for a := 0; a < 3; a++ {
				s[a*len(x)+i] = int32(p[a])
			}
		}
		c.ints[key] = s
	}
}

func runParityCase(t *testing.T, name string) {
	runParityCaseOn(t, openFixture(t, name), openTinyForParity(t), latentTolerance)
}

// runParityCaseOn renders a fixture's request on e with every stage tapped
// and compares the taps with the fixture's reference tensors, the
// sampler's latents within stepTolerance.
func runParityCaseOn(t *testing.T, fx *fixture, e *engine.Engine, stepTolerance float64) {
	cp := &capture{floats: map[string][]float32{}, ints: map[string][]int32{}}
	engine.SetTapForTest(e, cp.tap)
	r := fx.request()
	ctx := context.Background()
	pr, err := app.PlanRequest(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := plan.LookupMachine("m5-max-128")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Plan(pr, mc, plan.Options{NoFit: true})
	if err != nil || p.Verdict != plan.Fits {
		t.Fatalf("plan: %v %v", err, p)
	}
	req := engine.Request{Seed: r.Seed, Media: app.MediaReader{}, Output: discardOutput{}}
	if _, err := e.Generate(ctx, req, p, nil); err != nil {
		t.Fatal(err)
	}
	compareParity(t, fx, cp, stepTolerance)
}

var (
	parityOnce sync.Once
	parityDirT string
	parityErr  error
)

// openTinyForParity opens the embedded tiny model (the snapshot gen.py ran
// on: engine/weights WriteTiny at seed 1), without the cache so every stage
// runs and is tapped.
func openTinyForParity(t *testing.T) *engine.Engine {
	t.Helper()
	parityOnce.Do(func() {
		root, err := os.MkdirTemp("", "h3-parity-")
		if err != nil {
			parityErr = err
			return
		}
		parityDirT, parityErr = engine.TinyModelDir(root)
	})
	if parityErr != nil {
		t.Fatal(parityErr)
	}
	e, err := engine.Open(parityDirT, engine.Options{CacheEntries: -1, Exact: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

type discardOutput struct{}

func (discardOutput) Begin(int, int, int, engine.Audio) error { return nil }
func (discardOutput) Frame(int, engine.Pixels) error          { return nil }

// relL2 is ‖got − want‖ / ‖want‖ in float64.
func relL2(got, want []float32) float64 {
	var d, w float64
	for i := range want {
		x := float64(got[i]) - float64(want[i])
		d += x * x
		w += float64(want[i]) * float64(want[i])
	}
	if w == 0 {
		return math.Sqrt(d)
	}
	return math.Sqrt(d / w)
}
