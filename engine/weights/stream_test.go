package weights

import (
	"fmt"
	"testing"
)

// TestBlockStreamerMatchesResidentLoad streams the tiny DiT's blocks
// (twice around, so each slot is reused) and compares every streamed
// tensor with the same tensor loaded resident by LoadModule.
func TestBlockStreamerMatchesResidentLoad(t *testing.T) {
	src := openTinyDiT(t, false)
	b := cpuBackend(t)
	ref := newTinyDiT()
	mod, err := LoadModule(b, src, ref, LoadOptions{Dims: tinyDims()})
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Free()
	suffixes := Fields("", &tinyDiTCore{})
	prefixes := []string{"blocks.0.", "blocks.1.", "blocks.0.", "blocks.1."}
	s, err := NewBlockStreamer(b, src, prefixes, suffixes, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Prefetch(0)
	for i := range prefixes {
		if i+1 < len(prefixes) {
			s.Prefetch(i + 1)
		}
		ws, err := s.Wait(i)
		if err != nil {
			t.Fatal(err)
		}
		var blk tinyDiTCore
		if err := Bind(ws, "", &blk); err != nil {
			t.Fatal(err)
		}
		want := ref.Blocks[i%2]
		for _, pair := range [][2]string{{fmt.Sprint(blk.Attn.QKV.F32()[:7]), fmt.Sprint(want.Attn.QKV.F32()[:7])},
			{fmt.Sprint(blk.MLP.FC2.F32()), fmt.Sprint(want.MLP.FC2.F32())}, {fmt.Sprint(blk.Norm2.F32()), fmt.Sprint(want.Norm2.F32())}} {
			if pair[0] != pair[1] {
				t.Fatalf("streamed block %d differs from the resident load", i)
			}
		}
	}
	if _, err := s.Wait(7); err == nil {
		t.Fatal("waiting for a block never prefetched succeeded")
	}
}
