package ggml

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func panicMsg(f func()) (msg string) {
	defer func() { msg = fmt.Sprint(recover()) }()
	f()
	return "no panic"
}

// TestWeightsAcrossGraphs: a WeightSet allocated once serves two graphs;
// results of the first graph become unreadable once the second computes.
func TestWeightsAcrossGraphs(t *testing.T) {
	b := newCPU(t)
	ws := b.NewWeightSet(4)
	defer ws.Free()
	w := ws.Add("w", BF16, 64, 8)
	if err := ws.Alloc(); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	wv := randv(r, 64*8)
	w.SetF32(wv)
	if got := w.F32(); !slices.Equal(got, BF16ToF32(F32ToBF16(wv))) {
		t.Fatal("weight read-back differs from the bf16 rounding of what was set")
	}
	run := func(scale float32) (*Graph, *Tensor) {
		g := b.NewGraph(64)
		x := g.Input("x", F32, 64, 3)
		x.SetF32(randv(r, 64*3))
		y := g.Scale(g.MulMat(w, x), scale)
		g.Output(y)
		if err := g.Compute(); err != nil {
			t.Fatal(err)
		}
		return g, y
	}
	g1, y1 := run(1)
	defer g1.Free()
	if len(y1.F32()) != 8*3 {
		t.Fatal("wrong result size")
	}
	g2, y2 := run(2)
	defer g2.Free()
	_ = y2.F32()
	if msg := panicMsg(func() { y1.F32() }); !strings.Contains(msg, "overwritten by a later Compute") {
		t.Errorf("stale read: %s", msg)
	}
	if msg := panicMsg(func() { w.SetF32(wv[:3]) }); !strings.Contains(msg, "got 3 values, want 512") {
		t.Errorf("short weight: %s", msg)
	}
}

// TestComputeErrors: misuse at Compute time is an error, not a crash.
func TestComputeErrors(t *testing.T) {
	b := newCPU(t)
	g := b.NewGraph(0)
	defer g.Free()
	if err := g.Compute(); err == nil || !strings.Contains(err.Error(), "no outputs") {
		t.Errorf("empty graph: %v", err)
	}
	x := g.Input("x", F32, 4)
	unused := g.Input("unused", F32, 4)
	unused.SetF32(make([]float32, 4))
	x.SetF32(make([]float32, 4))
	g.Output(g.Scale(x, 2))
	if err := g.Compute(); err == nil || !strings.Contains(err.Error(), `"unused"`) {
		t.Errorf("unused input: %v", err)
	}
	other := b.NewGraph(0)
	defer other.Free()
	if msg := panicMsg(func() { other.Scale(x, 1) }); !strings.Contains(msg, "another graph") {
		t.Errorf("foreign tensor: %s", msg)
	}
}

// TestAllocHostZeroCopy places weights over mmapped memory: the graph reads
// them in place, and writing through the tensor API is refused.
func TestAllocHostZeroCopy(t *testing.T) {
	b := newCPU(t)
	mem, err := syscall.Mmap(-1, 0, 1<<16, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skip("no anonymous mmap:", err)
	}
	defer syscall.Munmap(mem)
	r := rand.New(rand.NewPCG(2, 2))
	av, bv := randv(r, 32*4), randv(r, 32)
	copy(mem[4096:], f32Bytes(av))
	copy(mem[8192:], f32Bytes(bv))
	ws := b.NewWeightSet(2)
	defer ws.Free()
	wa := ws.Add("a", F32, 32, 4)
	wb := ws.Add("b", F32, 32)
	zc, err := ws.AllocHost(mem, map[string]int{"a": 4096, "b": 8192})
	if err != nil {
		t.Fatal(err)
	}
	if !zc {
		t.Fatal("the CPU backend should map host memory without a copy")
	}
	copy(mem[8192:], f32Bytes(make([]float32, 32))) // visible in place: b is now zero
	g := b.NewGraph(0)
	defer g.Free()
	y := g.Add(wa, wb)
	g.Output(y)
	if err := g.Compute(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(y.F32(), av) {
		t.Error("the graph did not read the weights in place")
	}
	if msg := panicMsg(func() { wb.SetF32(bv) }); !strings.Contains(msg, "read-only") {
		t.Errorf("write to mapped weight: %s", msg)
	}
	if _, err := b.NewWeightSet(1).AllocHost(mem[1:], nil); err == nil {
		t.Error("unaligned memory accepted")
	}
}

// TestMeasure: the planned scratch covers the graph's largest live tensors
// and does not depend on computing it.
func TestMeasure(t *testing.T) {
	b := newCPU(t)
	g := b.NewGraph(0)
	defer g.Free()
	x := g.Input("x", F32, 1024, 256) // 1 MiB
	y := g.Add(g.SiLU(x), x)          // x is read again, so SiLU cannot run in place: >= 2 MiB
	g.Output(y)
	m, err := g.Measure()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("scratch %d bytes", m.Device)
	if m.Device < 2<<20 || m.Device > 8<<20 {
		t.Errorf("scratch %d bytes, want between 2 and 8 MiB", m.Device)
	}
}
