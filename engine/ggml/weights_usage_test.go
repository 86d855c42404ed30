//go:build cgo

package ggml

import (
	"syscall"
	"testing"
)

// TestWeightBuffersMarked: ggml's scheduler keeps an op on its weight's
// device only for buffers flagged as weights; unflagged, the H200 ran ops
// beside host inputs on the CPU. Both ways of placing weights flag theirs.
func TestWeightBuffersMarked(t *testing.T) {
	b := newCPU(t)
	ws := b.NewWeightSet(1)
	ws.Add("w", F32, 8)
	if err := ws.Alloc(); err != nil {
		t.Fatal(err)
	}
	defer ws.Free()
	if !cBufferHoldsWeights(ws.buf) {
		t.Fatal("Alloc: the weight buffer is not marked as weights")
	}

	mem, err := syscall.Mmap(-1, 0, 1<<16, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	hs := b.NewWeightSet(1)
	hs.Add("w", F32, 8)
	if _, err := hs.AllocHost(mem, map[string]int{"w": 0}); err != nil {
		t.Fatal(err)
	}
	defer hs.Free()
	if !cBufferHoldsWeights(hs.buf) {
		t.Fatal("AllocHost: the weight buffer is not marked as weights")
	}
}

// A weight whose name is past ggml's 63 bytes (a derived weight's
// checkpoint name and transform) is added, named by its tail in ggml and
// found by its whole name.
func TestWeightLongName(t *testing.T) {
	b := newCPU(t)
	ws := b.NewWeightSet(2)
	long := "decoder.resblocks.11.activations.5.downsample.lowpass.filter/down_blocks"
	other := "decoder.resblocks.10.activations.5.downsample.lowpass.filter/down_blocks"
	w := ws.Add(long, F32, 8)
	ws.Add(other, F32, 8)
	if ws.Get(long) != w {
		t.Fatalf("Get(%q) does not find the weight", long)
	}
	if n := w.Name(); len(n) > 63 || n != long[len(long)-len(n):] {
		t.Errorf("ggml name %q, want the name's last 63 bytes", n)
	}
}
