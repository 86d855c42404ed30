package ggml_test

import (
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/engine/ggml/backendtest"
)

// splitGraph builds a graph whose GPU part reads one index input on both
// sides of a CPU fallback: rows of x gathered by idx, attention with
// 32-wide heads (a size ggml-cuda's flash attention lacks, so it runs on
// the CPU, as the demo model's does), and the result gathered by idx again.
func splitGraph(b *ggml.Backend, x []float32, idx []int32, d, h, n int) (*ggml.Graph, *ggml.Tensor) {
	g := b.NewGraph(0)
	xt := g.Input("x", ggml.F32, d*h, n)
	xt.SetF32(x)
	it := g.Input("idx", ggml.I32, n)
	it.SetI32(idx)
	a := g.GetRows(xt, it)
	q := g.Permute(g.Reshape(a, d, h, n), 0, 2, 1, 3) // [d, n, h]
	att := g.Attention(q, q, q, ggml.AttentionOptions{KV: ggml.StoreAs(ggml.F32)})
	y := g.GetRows(g.Reshape(g.Cont(att), d*h, n), it)
	g.Output(y)
	return g, y
}

// TestReservedGraphKeepsSplitInputs computes the same kind of graph
// several times on the GPU, each in a fresh graph as the DiT's forwards
// are, and holds each result to the CPU's. Before Compute restored the
// nodes' inputs after its reserve, the GPU's second gather read a freed
// copy of idx on CUDA: wrong rows or an illegal address. It needs a GPU
// with a CPU fallback (CUDA: libggml-cuda.so beside the test binary).
func TestReservedGraphKeepsSplitInputs(t *testing.T) {
	if exe, err := os.Executable(); err == nil {
		lib := filepath.Join(filepath.Dir(exe), ggml.CUDALibrary)
		if _, err := ggml.LoadBackend(lib); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Logf("%v", err)
		}
	}
	gpu, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceGPU, TrackFallback: true})
	if errors.Is(err, ggml.ErrNoDevice) || errors.Is(err, ggml.ErrNoCgo) {
		t.Skip("needs a GPU backend")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	cpu, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer cpu.Close()

	const d, h, n = 32, 2, 96
	r := rand.New(rand.NewPCG(3, 5))
	for pass := range 3 {
		x := make([]float32, d*h*n)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		idx := make([]int32, n)
		for i, p := range r.Perm(n) {
			idx[i] = int32(p)
		}
		want := make([]float64, d*h*n)
		for i, v := range computeSplit(t, cpu, x, idx, d, h, n) {
			want[i] = float64(v)
		}
		got := computeSplit(t, gpu, x, idx, d, h, n)
		if e := backendtest.NMSE(got, want); !(e <= 1e-5) {
			t.Fatalf("pass %d: GPU result is %.3g (NMSE) from the CPU's", pass, e)
		}
	}
	fell := false
	for _, nd := range gpu.CPUNodes() {
		fell = fell || nd.Op == "FLASH_ATTN_EXT"
	}
	if !fell {
		t.Skip("this GPU runs 32-wide attention itself: the graph has no CPU split to test")
	}
}

func computeSplit(t *testing.T, b *ggml.Backend, x []float32, idx []int32, d, h, n int) []float32 {
	t.Helper()
	g, y := splitGraph(b, x, idx, d, h, n)
	defer g.Free()
	if err := g.Compute(); err != nil {
		t.Fatal(err)
	}
	return y.F32()
}
