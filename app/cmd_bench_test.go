package app

import (
	"encoding/json"
	"strings"
	"testing"
)

// The bench command runs the real kernels on the chosen backend and reports
// each as a positive throughput; bad sizes are refused before any work.
func TestBenchCommand(t *testing.T) {
	code, out, errs := runCmd(t, "bench", "--cpu", "--size", "128", "--tokens", "256", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("want 3 matmuls and 1 attention, got:\n%s", out)
	}
	for _, l := range lines {
		var r benchResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if r.Backend != "CPU" {
			t.Errorf("%s: ran on %q with --cpu", r.Name, r.Backend)
		}
		if r.GFLOPS <= 0 || r.Seconds <= 0 {
			t.Errorf("%s: %v GFLOP/s in %v s", r.Name, r.GFLOPS, r.Seconds)
		}
	}
	if code, _, errs := runCmd(t, "bench", "--size", "7"); code != 2 || !strings.Contains(errs, "--size") {
		t.Errorf("bad size: exit %d, %q", code, errs)
	}
	for _, bad := range [][]string{
		{"--dit", "512x512"}, {"--dit", "512x512x22", "--dit-weights", "f8"}, {"--dit", "500x512x22", "--cpu"},
		{"--qwen", "ten"}, {"--qwen", "100", "--qwen-weights", "q4"},
	} {
		if code, _, errs := runCmd(t, append([]string{"bench", "--size", "64", "--tokens", "64"}, bad...)...); code != 2 || !strings.Contains(errs, bad[0]) {
			t.Errorf("bench %v: exit %d, %q; want a usage error naming %s", bad, code, errs, bad[0])
		}
	}
}
