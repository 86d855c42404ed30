package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

func newCPU(t testing.TB) *Backend {
	t.Helper()
	b, err := NewBackend(BackendOptions{Device: DeviceCPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestMulMatAdd checks the basic path (inputs, compute, outputs) against a
// float64 reference.
func TestMulMatAdd(t *testing.T) {
	b := newCPU(t)
	g := b.NewGraph(0)
	defer g.Free()
	const k, m, n = 64, 24, 10
	r := rand.New(rand.NewPCG(1, 2))
	w, x, bias := randv(r, k*m), randv(r, k*n), randv(r, m)
	tw := g.Input("w", F32, k, m)
	tx := g.Input("x", F32, k, n)
	tb := g.Input("b", F32, m)
	y := g.Add(g.MulMat(tw, tx), tb).SetName("y")
	g.Output(y)
	tw.SetF32(w)
	tx.SetF32(x)
	tb.SetF32(bias)
	if err := g.Compute(); err != nil {
		t.Fatal(err)
	}
	got := y.F32()
	if s := y.Shape(); len(s) != 2 || s[0] != m || s[1] != n {
		t.Fatalf("shape %v, want [%d %d]", s, m, n)
	}
	var maxErr float64
	for j := range n {
		for i := range m {
			want := float64(bias[i])
			for l := range k {
				want += float64(w[i*k+l]) * float64(x[j*k+l])
			}
			maxErr = max(maxErr, math.Abs(want-float64(got[j*m+i])))
		}
	}
	t.Logf("max abs err %.3g", maxErr)
	if maxErr > 1e-4 {
		t.Fatalf("max abs err %g", maxErr)
	}
}

func randv(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}
