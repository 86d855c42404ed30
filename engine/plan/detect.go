package plan

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
)

// Detect returns the running machine's profile: on macOS from sysctl
// (hw.memsize, machdep.cpu.brand_string), elsewhere from the OS's memory
// total with a CPU-only throughput estimate.
func Detect() (Machine, error) {
	mem, brand, err := hostInfo()
	if err != nil {
		return Machine{}, fmt.Errorf("plan: detect machine: %w", err)
	}
	return machineFor(mem, brand), nil
}

// machineFor builds a profile for a detected memory size and CPU brand.
func machineFor(mem int64, brand string) Machine {
	if c, ok := chipByBrand(brand); ok {
		m := c.machine(int((mem + gib/2) / gib))
		m.MemoryBytes = mem
		m.WorkingSet = recommendedWorkingSet(mem)
		m.Detected = true
		return m
	}
	// Not Apple silicon: ggml's CPU backend, at roughly 50 GFLOP/s per core.
	return Machine{
		Name:         fmt.Sprintf("%s-%s-%d", runtime.GOOS, runtime.GOARCH, (mem+gib/2)/gib),
		Chip:         strings.TrimSpace(brand),
		MemoryBytes:  mem,
		WorkingSet:   mem * 3 / 4,
		Threadgroup:  32 << 10,
		GPUFamily:    "cpu",
		MatrixTFLOPS: float64(runtime.NumCPU()) * 0.05,
		BandwidthGBs: 20,
		SSDGBs:       2,
		Detected:     true,
	}
}

// parseMeminfo reads MemTotal (kB) from /proc/meminfo's format.
func parseMeminfo(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("meminfo: %w", err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("meminfo: no MemTotal line")
}
