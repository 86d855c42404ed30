package ggml

import (
	"math"
	"testing"
)

// A 1-D convolution longer than im2colLimit (lowered here from ggml-cuda's
// 65,535 grid rows) is built from IM2COLs of at most that many outputs and
// gives what one IM2COL gives, with padding, stride and dilation.
func TestConv1DInPieces(t *testing.T) {
	b, err := NewBackend(BackendOptions{Device: DeviceCPU, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const l, cin, cout, k, batch = 301, 3, 4, 5, 2
	xs := make([]float32, l*cin*batch)
	for i := range xs {
		xs[i] = float32(math.Sin(float64(i) * 0.37))
	}
	ws := make([]float32, k*cin*cout)
	for i := range ws {
		ws[i] = float32(math.Cos(float64(i)*0.91)) / 4
	}
	run := func(limit int64, stride, pad, dilation int) (out []float32, longest int64) {
		old := im2colLimit
		im2colLimit = limit
		defer func() { im2colLimit = old }()
		g := b.NewGraph(0)
		defer g.Free()
		x := g.Input("x", F32, l, cin, batch)
		x.SetF32(xs)
		w := g.Input("w", F32, k, cin, cout)
		w.SetF32(ws)
		y := g.Conv1D(x, w, stride, pad, dilation)
		g.Output(y)
		if err := g.Compute(); err != nil {
			t.Fatal(err)
		}
		for _, n := range g.Ops() {
			if n.Op == "IM2COL" {
				longest = max(longest, n.Shape[1])
			}
		}
		return y.F32(), longest
	}
	for _, c := range []struct{ stride, pad, dilation int }{{1, 0, 1}, {1, 2, 1}, {2, 3, 1}, {1, 6, 3}} {
		want, whole := run(im2colLimit, c.stride, c.pad, c.dilation)
		got, piece := run(64, c.stride, c.pad, c.dilation)
		if whole <= 64 || piece > 64 || len(got) != len(want) {
			t.Fatalf("%+v: longest IM2COL %d whole, %d in pieces (limit 64); %d outputs, want %d", c, whole, piece, len(got), len(want))
		}
		for i := range want {
			if math.Abs(float64(got[i]-want[i])) > 1e-6 {
				t.Fatalf("%+v: output %d is %v in pieces, %v whole", c, i, got[i], want[i])
			}
		}
	}
}
