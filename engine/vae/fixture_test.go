package vae

import (
	"math"
	"path/filepath"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/engine/ggml/ggmltest"
	"h3studio/engine/weights"
)

// Fixtures come from tools/fixtures/vae/gen.py (ComfyUI's PyTorch VAEs at
// tiny configs, float64 on the CPU). Tolerances are relative L2 errors of
// our float32 graphs against them.
const (
	tolF32      = 1e-4 // named intermediates and outputs, f32 end to end
	tolF16      = 5e-3 // f16 matmul weights and the backend's bf16/f16 attention
	tolBlendF32 = 1e-4 // tiled-vs-untiled gap against the reference gap (relative)
	// tolAudioChunk bounds windowed audio decoding against one graph: the
	// windows see replicate/zero padding where the full decode sees context.
	tolAudioChunk = 2e-3 // at 8 latents (0.2 s) of context
)

// exactKV keeps attention K/V in f32, the precision of the fixtures.
var exactKV = ggml.Precision{KV: ggml.StoreAs(ggml.F32)}

// recorder keeps the taps named in want, each from the first graph that
// produces it, as the fixtures keep a module's first call.
type recorder struct {
	want   map[string]bool
	values map[string][]float32
	shapes map[string][]int
}

func record(names ...string) *recorder {
	r := &recorder{want: map[string]bool{}, values: map[string][]float32{}, shapes: map[string][]int{}}
	for _, n := range names {
		r.want[n] = true
	}
	return r
}

func (r *recorder) tap(name string, shape []int, data []float32) {
	if r.want[name] && r.values[name] == nil {
		r.values[name], r.shapes[name] = append([]float32(nil), data...), shape
	}
}

const fixtureDir = "../../tools/fixtures/vae"

func openFixture(t testing.TB, name string) weights.Source {
	t.Helper()
	src, err := weights.OpenSafetensors(filepath.Join(fixtureDir, name+".safetensors"))
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

// fixtureTensor returns a fixture tensor's values and checkpoint shape.
func fixtureTensor(t testing.TB, src weights.Source, name string) ([]float32, []int64) {
	t.Helper()
	info, ok := src.Lookup(name)
	if !ok {
		t.Fatalf("fixture has no tensor %s", name)
	}
	v, err := weights.Float32(src, name)
	if err != nil {
		t.Fatal(err)
	}
	return v, info.Shape
}

func relL2(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var num, den float64
	for i := range got {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(num / math.Max(den, 1e-30))
}

func checkRel(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, want %d", what, len(got), len(want))
		return
	}
	tol = ggmltest.Tol(tol)
	e := relL2(got, want)
	t.Logf("%-34s rel L2 %.3g (%d values)", what, e, len(got))
	if !(e <= tol) {
		t.Errorf("%s: rel L2 %.3g > %.1g", what, e, tol)
	}
}

// cpuBackend runs on one thread: the tiny graphs are thousands of small
// nodes, and on a busy 2-core machine ggml's per-node thread barrier costs
// far more than a second thread gains (the suite took 10x longer).
func cpuBackend(t testing.TB) *ggml.Backend {
	t.Helper()
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU, Threads: 1})
	if err != nil {
		t.Skipf("no ggml backend: %v", err)
	}
	t.Cleanup(b.Close)
	return b
}

// parityBackend runs the VAEs of the fixture tests: on one CPU thread
// (see cpuBackend), or on Metal under make mac-test, where a node placed
// on the CPU fails the test and checkRel widens to ggmltest.Tol.
func parityBackend(t testing.TB) *ggml.Backend {
	t.Helper()
	return ggmltest.Backend(t, ggmltest.Options{Threads: 1})
}

// auditor collects Metal-audit findings of every graph it is shown.
type auditor struct {
	t      *testing.T
	graphs int
}

func (a *auditor) inspect(g *ggml.Graph) {
	a.graphs++
	for _, f := range ggml.Audit(g) {
		a.t.Errorf("Metal audit: %s", f)
	}
}

func (a *auditor) done() {
	a.t.Helper()
	if a.graphs == 0 {
		a.t.Error("no graph was audited")
	}
	a.t.Logf("Metal audit: %d graphs, no CPU fallback", a.graphs)
}
