package app

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"h3studio/engine/ggml"
	"h3studio/engine/plan"
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

// LookupMachine is plan.LookupMachine, except that "auto" on a machine
// with a discrete GPU registered (CUDA) describes that GPU: its memory is
// what a render may use. Apple silicon keeps the chip profile, whose
// unified memory the planner already models.
func LookupMachine(name string) (plan.Machine, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "auto" || n == "" {
		if c, ok := ggml.GPUDevice(); ok && !c.Unified && runtime.GOOS != "darwin" {
			return plan.DiscreteGPU(c.Description, int64(c.MemoryTotal), int64(c.MemoryFree)), nil
		}
	}
	return plan.LookupMachine(name)
}
