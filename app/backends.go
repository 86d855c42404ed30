package app

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"h3studio/engine/ggml"
	"h3studio/engine/plan"
	"h3studio/metal"
)

// LoadGPUBackends registers ggml GPU backend libraries before any command
// or window opens a backend, so render, plan --machine auto and bench run
// on the GPU. setting is what main read from H3_GGML_BACKEND: library paths
// separated by the OS's list separator. Empty, it looks for the CUDA
// library `make cuda` puts beside the binary in exeDir (nothing on a Mac,
// whose Metal backend is built in). A library that does not load is a
// warning on stderr, not an error: the app then runs on the CPU, as it
// would without the file.
func LoadGPUBackends(setting, exeDir string, stderr io.Writer) []ggml.LoadedBackend {
	var paths []string
	named := setting != ""
	if named {
		paths = filepath.SplitList(setting)
	} else if exeDir != "" && runtime.GOOS != "darwin" {
		p := filepath.Join(exeDir, ggml.CUDALibrary)
		if _, err := os.Stat(p); err == nil {
			paths = append(paths, p)
		}
	}
	var out []ggml.LoadedBackend
	for _, p := range paths {
		if strings.TrimSpace(p) == "" {
			continue
		}
		lb, err := ggml.LoadBackend(p)
		if err != nil {
			fmt.Fprintf(stderr, "h3studio: GPU backend not used, running on the CPU: %s\n", err)
			continue
		}
		out = append(out, lb)
	}
	return out
}

// LookupMachine is plan.LookupMachine for a named profile; "auto" (or
// empty) detects the running machine with its GPU: a discrete GPU
// registered through CUDA is described by its free memory, and a Mac by
// what its Metal device reports (metal.Detect), sysctl being plan.Detect's
// fallback when no Metal device answers.
func LookupMachine(name string) (plan.Machine, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n != "auto" && n != "" {
		return plan.LookupMachine(name)
	}
	if c, ok := ggml.GPUDevice(); ok && !c.Unified && runtime.GOOS != "darwin" {
		return plan.DiscreteGPU(c.Description, int64(c.MemoryTotal), int64(c.MemoryFree)), nil
	}
	return plan.Detect(appleGPU())
}

// appleGPU is the Metal device's report for the planner, nil where there is
// none (any OS but macOS, or a build without cgo). The device is asked once,
// at the first plan: the window re-plans on every edit.
var appleGPU = sync.OnceValue(func() *plan.AppleGPU {
	d, err := metal.Detect()
	if err != nil {
		return nil
	}
	return &plan.AppleGPU{
		WorkingSet:  int64(d.RecommendedWorkingSet),
		MaxBuffer:   int64(d.MaxBufferLength),
		Threadgroup: d.MaxThreadgroupMemory,
		Family:      d.Family,
	}
})
