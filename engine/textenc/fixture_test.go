package textenc

import (
	"encoding/binary"
	"math"
	"path/filepath"
	"testing"

	"h3studio/engine/weights/safetensors"
)

// fixtureDir holds the committed output of tools/fixtures/textenc/gen.py.
var fixtureDir = filepath.Join("..", "..", "tools", "fixtures", "textenc")

type fixture struct {
	t     *testing.T
	cases *safetensors.File
	model *safetensors.File
	cfg   Config
}

func openFixture(t *testing.T) *fixture {
	t.Helper()
	cases, err := safetensors.Open(filepath.Join(fixtureDir, "cases.safetensors"))
	if err != nil {
		t.Fatalf("open fixture (regenerate with tools/fixtures/textenc/gen.py on the device): %v", err)
	}
	model, err := safetensors.Open(filepath.Join(fixtureDir, "model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(filepath.Join(fixtureDir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cases.Close(); model.Close() })
	return &fixture{t: t, cases: cases, model: model, cfg: cfg}
}

func (f *fixture) layersUsed() int {
	var n int
	for _, c := range f.cases.Metadata["layers_used"] {
		n = n*10 + int(c-'0')
	}
	return n
}

func (f *fixture) has(name string) bool { _, ok := f.cases.Info(name); return ok }

// f32 reads a case tensor (float32) and its shape.
func (f *fixture) f32(name string) ([]float32, []int64) {
	f.t.Helper()
	return readF32(f.t, f.cases, name)
}

func (f *fixture) i32(name string) []int32 {
	f.t.Helper()
	tn, ok := f.cases.Tensor(name)
	if !ok || tn.DType != safetensors.I32 {
		f.t.Fatalf("fixture tensor %s missing or not I32", name)
	}
	out := make([]int32, len(tn.Data)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(tn.Data[4*i:]))
	}
	return out
}

func readF32(t *testing.T, file *safetensors.File, name string) ([]float32, []int64) {
	t.Helper()
	tn, ok := file.Tensor(name)
	if !ok {
		t.Fatalf("fixture tensor %s missing", name)
	}
	v, err := tn.Float32()
	if err != nil {
		t.Fatal(err)
	}
	return v, tn.Shape
}

// relL2 is ||got-want|| / ||want||.
func relL2(got, want []float32) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return math.Sqrt(num / den)
}

func relL2f64(got []float64, want []float32) float64 {
	g := make([]float32, len(got))
	for i, v := range got {
		g[i] = float32(v)
	}
	return relL2(g, want)
}
