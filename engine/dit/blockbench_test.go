package dit

import (
	"math"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/plan"
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

// The planner's denoise scratch (plan.Dims.DiTRowBytes) against what ggml's
// allocator actually plans for the block stack, on a narrow config with the
// release's structure (head dim 128, FFN/hidden 8/3). Measured at release
// size on the CPU: 237.0 KB/row, 9.8 % above the planner's 215.8 KB, and
// flat in the block count once each block gathers its own modulation.
func TestBlockBenchScratchMatchesPlan(t *testing.T) {
	cfg, err := arch.ReleaseDiT()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Hidden, cfg.Heads, cfg.FFN = 768, 8, 2048
	d := plan.Dims{Hidden: cfg.Hidden, Heads: cfg.Heads, HeadDim: cfg.HeadDim, FFN: cfg.FFN}
	b := cpuBackend(t)
	const rows = 1024
	var got [2]int
	for i, blocks := range []int{1, 3} {
		bb, err := NewBlockBench(b, cfg, ggml.Q8_0, blocks, 1)
		if err != nil {
			t.Fatal(err)
		}
		m, err := bb.Memory(rows)
		bb.Close()
		if err != nil {
			t.Fatal(err)
		}
		got[i] = m.Device
	}
	want := rows * d.DiTRowBytes()
	t.Logf("compute buffer %d B (1 block), %d B (3 blocks); planner %d B: %+.1f %%",
		got[0], got[1], want, 100*(float64(got[1])/float64(want)-1))
	if got[1] != got[0] {
		t.Errorf("the stack's scratch grows with its blocks: %d B for 1, %d B for 3", got[0], got[1])
	}
	if r := float64(got[1]) / float64(want); r < 0.9 || r > 1.1 {
		t.Errorf("planner's DiT scratch is off by %+.0f %% (measured %d B at %d rows, planned %d B)", 100*(r-1), got[1], rows, want)
	}
}

// A bench adapter switched off leaves the stack's output bit-identical;
// switched on it changes it, and its FLOP are 2·rank·(in+out) per row per
// linear.
func TestBlockBenchLoRA(t *testing.T) {
	cfg := tinyConfig(t)
	b := cpuBackend(t)
	run := func(rank int, on bool) ([]float32, float64) {
		bb, err := NewBlockBench(b, cfg, ggml.F32, 2, 5)
		if err != nil {
			t.Fatal(err)
		}
		defer bb.Close()
		if rank > 0 {
			if err := bb.AddLoRA(rank, 9); err != nil {
				t.Fatal(err)
			}
			bb.UseLoRA(on)
		}
		out, err := bb.Run(16, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out, bb.LoRAFlops(16)
	}
	base, _ := run(0, false)
	off, offFlops := run(4, false)
	on, flops := run(4, true)
	h, in, f := cfg.Hidden, cfg.Inner(), cfg.FFN
	want := 2 * 4 * 16 * float64((h+3*in)+(in+h)+(h+2*f)+(f+h))
	if offFlops != 0 || flops != want {
		t.Errorf("LoRA FLOP %g off, %g on; want 0 and %g", offFlops, flops, want)
	}
	same := true
	for i := range base {
		if math.Float32bits(base[i]) != math.Float32bits(off[i]) {
			t.Fatalf("output[%d] %g with the adapter off, %g without one", i, off[i], base[i])
		}
		same = same && on[i] == base[i]
	}
	if same {
		t.Error("the adapter switched on changed nothing")
	}
	t.Logf("rel change with the adapter on: %.2e", relL2(on, base))
}
