//go:build long

package dit

import (
	"math"
	"testing"
	"time"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
)

// One release-size block (bf16, 385.35 M parameters) over a few hundred
// rows on the CPU: shapes, memory, finiteness and the Metal audit.
func TestReleaseBlock(t *testing.T) {
	cfg, err := arch.ReleaseDiT()
	if err != nil {
		t.Fatal(err)
	}
	b := cpuBackend(t)
	bb, err := NewBlockBench(b, cfg, ggml.BF16, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	params := 5376*21504 + 7168*5376 + 5376*28672 + 14336*5376
	if want := 2*params + 4*(2*5376+2*128); bb.Bytes() != want {
		t.Errorf("block weights %d bytes, want %d", bb.Bytes(), want)
	}
	const rows = 300
	start := time.Now()
	out, err := bb.Run(rows, func(g *ggml.Graph) {
		for _, f := range ggml.Audit(g) {
			t.Errorf("Metal audit: %s", f)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	el := time.Since(start)
	if len(out) != rows*5376 {
		t.Fatalf("%d outputs, want %d", len(out), rows*5376)
	}
	var sq float64
	for _, v := range out {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatal("non-finite output")
		}
		sq += float64(v) * float64(v)
	}
	t.Logf("release block, %d rows: %.2f s, %.1f GFLOP/s, rms %.3f, weights %.1f MiB",
		rows, el.Seconds(), bb.Flops(rows)/el.Seconds()/1e9, math.Sqrt(sq/float64(len(out))), float64(bb.Bytes())/(1<<20))
}
