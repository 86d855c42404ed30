package ggml

import "testing"

// A copy that would reach past copyLimit (lowered here from ggml-cuda's
// INT_MAX) is built in pieces and gives exactly what one copy gives.
func TestSplitCopy(t *testing.T) {
	b, err := NewBackend(BackendOptions{Device: DeviceCPU, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	run := func(limit int64) (cont, cast []float32, copies int) {
		old := copyLimit
		copyLimit = limit
		defer func() { copyLimit = old }()
		g := b.NewGraph(0)
		defer g.Free()
		// The DiT's v: an interleaved third of fused QKV rows, permuted.
		const hd, heads, rows = 8, 3, 50
		qkv := g.Input("qkv", F32, 3*hd*heads, rows)
		vals := make([]float32, 3*hd*heads*rows)
		for i := range vals {
			vals[i] = float32(i)
		}
		qkv.SetF32(vals)
		v := g.View(qkv, 2*hd*4, []int{hd, heads, rows}, []int{3 * hd * 4, qkv.Nb(1)})
		c := g.Cont(g.Permute(v, 0, 2, 1, 3))
		h := g.Cast(g.Permute(v, 0, 2, 1, 3), F16)
		g.Output(c, h)
		if err := g.Compute(); err != nil {
			t.Fatal(err)
		}
		for _, n := range g.Ops() {
			if n.Op == "CPY" || n.Op == "CONT" {
				copies++
			}
		}
		return c.F32(), h.F32(), copies
	}
	wantC, wantH, one := run(copyLimit)
	gotC, gotH, many := run(4000) // the permuted view reaches ~14 KB
	if one != 2 || many < 6 {
		t.Errorf("copies: %d with the real limit (want 2), %d with a 4000-byte limit (want pieces)", one, many)
	}
	for i := range wantC {
		if gotC[i] != wantC[i] || gotH[i] != wantH[i] {
			t.Fatalf("element %d: split copy %v/%v, single copy %v/%v", i, gotC[i], gotH[i], wantC[i], wantH[i])
		}
	}
	t.Logf("%d copy nodes in pieces against %d", many, one)
}

// The DiT's v at the largest geometry (37,810 rows of fused QKV, 3.25 GB
// reach) builds as pieces: this graph aborted ggml-cuda, then panicked on
// the garbage unit-axis stride ggml_permute leaves past 2 GiB. Only built,
// never allocated.
func TestSplitCopyReleaseV(t *testing.T) {
	b, err := NewBackend(BackendOptions{Device: DeviceCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	g := b.NewGraph(0)
	defer g.Free()
	qkv := g.Input("qkv", F32, 3*128*56, 37810)
	v := g.View(qkv, 2*128*4, []int{128, 56, 37810}, []int{3 * 128 * 4, qkv.Nb(1)})
	c := g.Cont(g.Permute(v, 0, 2, 1, 3))
	g.Output(c)
	conts := 0
	for _, n := range g.Ops() {
		if n.Op == "CONT" {
			conts++
		}
	}
	if c.Ne(0) != 128 || c.Ne(1) != 37810 || c.Ne(2) != 56 || !c.Contiguous() || conts < 2 {
		t.Errorf("result %v contiguous %v from %d copies; want [128 37810 56], contiguous, in pieces", c.Shape(), c.Contiguous(), conts)
	}
}
