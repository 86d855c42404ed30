package plan

import (
	"bufio"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
)

// AppleGPU is what Metal reports about a Mac's default device (app fills
// it from metal.Detect). The planner takes it as data so that it stays free
// of cgo.
type AppleGPU struct {
	WorkingSet  int64 // recommendedMaxWorkingSetSize, bytes
	MaxBuffer   int64 // maxBufferLength, bytes
	Threadgroup int   // maxThreadgroupMemoryLength, bytes
	Family      int   // N of the highest MTLGPUFamilyAppleN supported
}

// Detect returns the running machine's profile: the chip and memory size
// from the OS (sysctl on macOS, /proc on Linux), the GPU's limits from gpu
// where the caller has a Metal device's report. Without one (nil, or a
// report without a working set) an Apple chip is planned by Apple's rule
// on hw.memsize and any other machine as ggml's CPU backend; Machine.Source
// says which.
func Detect(gpu *AppleGPU) (Machine, error) {
	mem, brand, err := hostInfo()
	if err != nil {
		return Machine{}, fmt.Errorf("plan: detect machine: %w", err)
	}
	return machineFor(mem, brand).withMetal(gpu), nil
}

// withMetal replaces what the chip table and Apple's rule guessed with the
// Metal device's own figures, on Apple silicon only (the CPU profile's
// throughput is not the GPU's).
func (m Machine) withMetal(gpu *AppleGPU) Machine {
	if gpu == nil || gpu.WorkingSet <= 0 || m.Source != SourceSysctl {
		return m
	}
	m.WorkingSet, m.Source = gpu.WorkingSet, SourceMetal
	m.MaxBufferBytes = gpu.MaxBuffer
	if gpu.Threadgroup > 0 {
		m.Threadgroup = gpu.Threadgroup
	}
	if gpu.Family > 0 {
		m.GPUFamily = fmt.Sprintf("apple%d", gpu.Family)
	}
	return m
}

// machineFor builds a profile for a detected memory size and CPU brand.
func machineFor(mem int64, brand string) Machine {
	if c, ok := chipByBrand(brand); ok {
		m := c.machine(int((mem + gib/2) / gib))
		m.MemoryBytes = mem
		m.WorkingSet, m.Source = recommendedWorkingSet(mem), SourceSysctl
		m.Detected = true
		return m
	}
	// Not Apple silicon: ggml's CPU backend, at roughly 50 GFLOP/s per core.
	return Machine{
		Name:         fmt.Sprintf("%s-%s-%d", runtime.GOOS, runtime.GOARCH, (mem+gib/2)/gib),
		Chip:         strings.TrimSpace(brand),
		MemoryBytes:  mem,
		WorkingSet:   mem * 3 / 4,
		Source:       SourceHost,
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
