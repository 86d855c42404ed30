package ggml

import (
	"errors"
	"testing"
)

// absurd is a shape of 2^52 f32 values (16 PiB): more than any address
// space, so the CPU backend's aligned malloc refuses it at once (no
// overcommit can grant it) and ggml returns NULL instead of asserting.
var absurd = []int{1 << 20, 1 << 20, 1 << 12}

// TestErrOutOfMemory: a weight set and a graph the CPU backend cannot hold
// fail with an error that errors.Is ErrOutOfMemory, and the backend stays
// usable afterwards.
func TestErrOutOfMemory(t *testing.T) {
	b := newCPU(t)
	ws := b.NewWeightSet(1)
	defer ws.Free()
	ws.Add("huge", F32, absurd...)
	if err := ws.Alloc(); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("WeightSet.Alloc of 16 PiB: %v, want ErrOutOfMemory", err)
	} else {
		t.Logf("weights: %v", err)
	}

	g := b.NewGraph(8)
	defer g.Free()
	g.Output(g.Scale(g.Input("x", F32, absurd...), 2))
	if _, err := g.Measure(); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("Measure of a 16 PiB graph: %v, want ErrOutOfMemory", err)
	}
	if err := g.Compute(); !errors.Is(err, ErrOutOfMemory) {
		t.Errorf("Compute of a 16 PiB graph: %v, want ErrOutOfMemory", err)
	} else {
		t.Logf("graph: %v", err)
	}

	// A failed reservation leaves the scheduler able to plan the next graph.
	small := b.NewGraph(8)
	defer small.Free()
	x := small.Input("x", F32, 4)
	x.SetF32([]float32{1, 2, 3, 4})
	y := small.Scale(x, 2)
	small.Output(y)
	if err := small.Compute(); err != nil {
		t.Fatalf("compute after an out-of-memory graph: %v", err)
	}
	if got := y.F32(); got[3] != 8 {
		t.Errorf("after an out-of-memory graph: got %v, want x*2", got)
	}
}
