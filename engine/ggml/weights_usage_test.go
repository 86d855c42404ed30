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
