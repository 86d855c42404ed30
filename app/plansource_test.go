package app

import (
	"strings"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/metal"
)

// TestPlanShowsBudgetSource: `h3studio plan` says where its budget came
// from: Metal on a Mac, the host's memory here, the user's --memory-gb.
func TestPlanShowsBudgetSource(t *testing.T) {
	auto := "host"
	if _, err := metal.Detect(); err == nil {
		auto = "metal"
	} else if c, ok := ggml.GPUDevice(); ok && !c.Unified {
		auto = "cuda"
	}
	want := "budget = working set (from " + auto + ") - 2.0 GB reserve"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--machine", "auto"}, want},
		{[]string{"--machine", "m5-max-64"}, "budget = working set (from profile) - 2.0 GB reserve"},
		{[]string{"--machine", "m5-max-64", "--memory-gb", "30"}, "budget set by the user (--memory-gb)"},
	} {
		code, out, errs := runCmd(t, append([]string{"plan", "--model", "official-bf16", "-p", "a fox"}, c.args...)...)
		if !strings.Contains(out, c.want) {
			t.Errorf("plan %v (exit %d, %s): no %q in\n%s", c.args, code, errs, c.want, out)
		}
	}
}
