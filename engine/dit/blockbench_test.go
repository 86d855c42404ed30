package dit

import (
	"math"
	"testing"

	"h3studio/engine/ggml"
)

// A stack of seeded blocks holds each block's own weights (distinct values,
// the same seed giving the same ones), runs them in one graph, and its
// timing path computes the same graph.
func TestBlockBenchStack(t *testing.T) {
	cfg := tinyConfig(t)
	b := cpuBackend(t)
	one, err := NewBlockBench(b, cfg, ggml.BF16, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	bb, err := NewBlockBench(b, cfg, ggml.BF16, 3, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	if bb.Blocks() != 3 || bb.Bytes() != 3*one.Bytes() {
		t.Fatalf("3 blocks: %d blocks, %d bytes; one block is %d bytes", bb.Blocks(), bb.Bytes(), one.Bytes())
	}
	q0, q1 := bb.cores[0].QKV.Raw(), bb.cores[1].QKV.Raw()
	if string(q0) == string(q1) {
		t.Error("blocks 0 and 1 have identical qkv weights")
	}
	if string(q0) != string(one.cores[0].QKV.Raw()) {
		t.Error("the same seed gave block 0 different qkv weights")
	}
	rows := 40
	nodes := 0
	out, err := bb.Run(rows, func(g *ggml.Graph) {
		for _, n := range g.Ops() {
			if n.Op == "FLASH_ATTN_EXT" {
				nodes++
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if nodes < 3 {
		t.Errorf("graph has %d attention nodes, want one or more per block (3 blocks)", nodes)
	}
	if len(out) != rows*cfg.Hidden {
		t.Fatalf("%d outputs, want %d", len(out), rows*cfg.Hidden)
	}
	for _, v := range out {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatal("non-finite output")
		}
	}
	if d, err := bb.Time(rows, 1); err != nil || d <= 0 {
		t.Fatalf("Time: %v, %v", d, err)
	}
}
