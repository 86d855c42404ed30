package ggml

import (
	"math/rand/v2"
	"time"
)

// Timing probes shared by `make bench` (CPU) and `make mac-bench` (Metal).

// MatMulGFLOPS times reps multiplications of weights [k, m] stored as dt by
// f32 activations [k, n] on b (after one warm-up run) and returns GFLOP/s
// (2·m·n·k per product) of the best run.
func MatMulGFLOPS(b *Backend, dt DType, m, n, k, reps int) (float64, error) {
	g := b.NewGraph(0)
	defer g.Free()
	w := g.Input("w", dt, k, m)
	x := g.Input("x", F32, k, n)
	y := g.MulMat(w, x)
	g.Output(y)
	r := rand.New(rand.NewPCG(1, 1))
	w.SetF32(randFloats(r, k*m))
	x.SetF32(randFloats(r, k*n))
	best, err := bestOf(g, reps)
	return 2 * float64(m) * float64(n) * float64(k) / best / 1e9, err
}

// AttentionGFLOPS times non-causal attention of n tokens with the given
// heads and head dim (K/V in the backend's KVType) and returns GFLOP/s
// (4·n²·d per head) and the best run's duration.
func AttentionGFLOPS(b *Backend, n, heads, d, reps int) (float64, time.Duration, error) {
	g := b.NewGraph(0)
	defer g.Free()
	kv := b.KVType()
	q := g.Input("q", F32, d, n, heads)
	k := g.Input("k", kv, d, n, heads)
	v := g.Input("v", kv, d, n, heads)
	y := g.Attention(q, k, v, AttentionOptions{})
	g.Output(y)
	r := rand.New(rand.NewPCG(2, 2))
	q.SetF32(randFloats(r, d*n*heads))
	k.SetF32(randFloats(r, d*n*heads))
	v.SetF32(randFloats(r, d*n*heads))
	best, err := bestOf(g, reps)
	return 4 * float64(n) * float64(n) * float64(d) * float64(heads) / best / 1e9, time.Duration(best * 1e9), err
}

// bestOf computes g reps times (reps 0: a single timed run, no warm-up) and
// returns the fastest run in seconds.
func bestOf(g *Graph, reps int) (float64, error) {
	if reps > 0 {
		if err := g.Compute(); err != nil {
			return 0, err
		}
	}
	best := 0.0
	for i := range max(reps, 1) {
		t0 := time.Now()
		if err := g.Compute(); err != nil {
			return 0, err
		}
		if s := time.Since(t0).Seconds(); i == 0 || s < best {
			best = s
		}
	}
	return best, nil
}

func randFloats(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}
