package ggml

import "time"

// Timing probes shared by `make bench` (CPU) and `make mac-bench` (Metal).

// MatMulGFLOPS times reps multiplications of weights [k, m] stored as dt by
// f32 activations [k, n] on b (after one warm-up run) and returns GFLOP/s
// (2·m·n·k per product) of the best run.
func MatMulGFLOPS(b *Backend, dt DType, m, n, k, reps int) (float64, error) {
	ops, err := resident(b, 1, operand{"w", dt, []int{k, m}}, operand{"x", F32, []int{k, n}})
	if err != nil {
		return 0, err
	}
	defer ops.Free()
	g := b.NewGraph(0)
	defer g.Free()
	g.Output(g.MulMat(ops.Get("w"), ops.Get("x")))
	best, err := bestOf(g, reps)
	return 2 * float64(m) * float64(n) * float64(k) / best / 1e9, err
}

// AttentionGFLOPS times non-causal attention of n tokens with the given
// heads and head dim (K/V in the backend's KVType) and returns GFLOP/s
// (4·n²·d per head) and the best run's duration.
func AttentionGFLOPS(b *Backend, n, heads, d, reps int) (float64, time.Duration, error) {
	kv := b.KVType()
	shape := []int{d, n, heads}
	ops, err := resident(b, 2, operand{"q", F32, shape}, operand{"k", kv, shape}, operand{"v", kv, shape})
	if err != nil {
		return 0, 0, err
	}
	defer ops.Free()
	g := b.NewGraph(0)
	defer g.Free()
	g.Output(g.Attention(ops.Get("q"), ops.Get("k"), ops.Get("v"), AttentionOptions{}))
	best, err := bestOf(g, reps)
	return 4 * float64(n) * float64(n) * float64(d) * float64(heads) / best / 1e9, time.Duration(best * 1e9), err
}

// operand is one random input of a timing probe.
type operand struct {
	name  string
	dt    DType
	shape []int
}

// resident places a probe's operands in the primary device's memory, so a
// timing measures the kernel rather than a host-to-device copy per run: as
// graph inputs they would cross a discrete GPU's PCIe link every time
// (384 MB per 8192^3 product, several times the product itself). Values
// are seeded uniform ones of unit variance, generated on the device.
func resident(b *Backend, seed uint64, ops ...operand) (*WeightSet, error) {
	ws := b.NewWeightSet(len(ops))
	for _, o := range ops {
		ws.Add(o.name, o.dt, o.shape...)
	}
	err := ws.Alloc()
	if err == nil {
		err = ws.FillSeeded(seed, func(*Tensor) Init { return Init{Std: 1} })
	}
	if err != nil {
		ws.Free()
		return nil, err
	}
	return ws, nil
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
