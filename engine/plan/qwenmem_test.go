package plan

import (
	"testing"

	"h3studio/engine/arch"
)

// TestQwenPrefillBytesMatchesTheH200 holds the prefill's memory model to
// the working memory bench --qwen measured on the H200 (the device's
// high-water mark minus the placed weights; tools/gpu/run.sh, 2026-12-01):
// the planner decides from it whether a long prompt fits a Mac.
func TestQwenPrefillBytesMatchesTheH200(t *testing.T) {
	rel, err := arch.Release()
	if err != nil {
		t.Fatal(err)
	}
	d := DimsOf(rel)
	for _, m := range []struct {
		tokens   int
		measured float64
	}{{10231, 1847590912}, {50000, 2942304256}, {100000, 4171235328}} {
		got := float64(d.QwenPrefillBytes(m.tokens))
		r := got / m.measured
		t.Logf("%6d tokens: planned %.2f GB, measured %.2f GB (%+.1f %%)", m.tokens, got/1e9, m.measured/1e9, 100*(r-1))
		if r < 0.9 || r > 1.1 {
			t.Errorf("%d tokens: planned %.0f B is %+.1f %% off the measured %.0f B", m.tokens, got, 100*(r-1), m.measured)
		}
	}
}
