package app

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/engine/plan"
	"h3studio/metal"
)

// A library that cannot load is a warning and the app stays on the CPU;
// with no setting, only a file beside the binary is tried.
func TestLoadGPUBackends(t *testing.T) {
	dir := t.TempDir()
	var errs bytes.Buffer
	if got := LoadGPUBackends("", dir, &errs); len(got) != 0 || errs.Len() != 0 {
		t.Errorf("empty folder: loaded %v, warned %q", got, errs.String())
	}
	if err := os.WriteFile(filepath.Join(dir, ggml.CUDALibrary), []byte("junk"), 0o644); err != nil {
		t.Fatal(err)
	}
	errs.Reset()
	got := LoadGPUBackends("", dir, &errs)
	if runtime.GOOS == "darwin" {
		if errs.Len() != 0 {
			t.Errorf("a Mac looked beside the binary: %q", errs.String())
		}
	} else if len(got) != 0 || !strings.Contains(errs.String(), "running on the CPU") || !strings.Contains(errs.String(), dir) {
		t.Errorf("junk library beside the binary: loaded %v, warned %q", got, errs.String())
	}
	errs.Reset()
	named := filepath.Join(dir, "missing.so") + string(os.PathListSeparator) + filepath.Join(dir, "other.so")
	if got := LoadGPUBackends(named, "", &errs); len(got) != 0 || strings.Count(errs.String(), "running on the CPU") != 2 {
		t.Errorf("two missing libraries named: loaded %v, warned %q", got, errs.String())
	}
}

// TestAutoMachineFromMetal: "auto" on a Mac plans with the Metal device's
// own working set, threadgroup memory and family; elsewhere with the host
// (or a CUDA GPU), never with a Metal source it cannot have. make test on
// the Mac runner is where the first half runs.
func TestAutoMachineFromMetal(t *testing.T) {
	mc, err := LookupMachine("auto")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("auto: %s, working set %d from %s, budget %d", mc.Name, mc.WorkingSet, mc.Source, mc.Budget())
	d, err := metal.Detect()
	if err != nil {
		if mc.Source == plan.SourceMetal || mc.Source == plan.SourceProfile {
			t.Errorf("no Metal device (%v), yet the working set's source is %s", err, mc.Source)
		}
		return
	}
	if mc.Source != plan.SourceMetal || mc.WorkingSet != int64(d.RecommendedWorkingSet) ||
		mc.Threadgroup != d.MaxThreadgroupMemory || mc.GPUFamily != fmt.Sprintf("apple%d", d.Family) {
		t.Errorf("auto on %v: %+v, want Metal's figures", d, mc)
	}
}
