// Package plan counts what a MiniMax-H3 request will cost before anything
// runs (Qwen sequence, DiT rows, per-phase memory, time) and fits it to a
// machine: when a sequence limit or the memory budget would be crossed it
// streams weights, down-scales reference images, pools reference-clip
// tokens, shortens clips and lowers the render canvas, in a fixed order of
// least harm, explaining each decision; only then does it refuse, with a
// concrete change that fits. It is pure Go (no tensors, no cgo) so the UI
// can re-plan on every edit and the engine executes exactly the plan.
//
// The arithmetic comes from the model's config (shared H3 facts sections
// 2-7 and 12) and the memory behaviour of peer engines (h3.c, vpipe): peaks
// are per phase, never a sum of phases that do not coexist.
package plan

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

const gib = 1 << 30

// Machine is an Apple-silicon (or other) machine profile.
type Machine struct {
	Name         string  `json:"name"`
	Chip         string  `json:"chip"`         // "M3 Ultra"
	MemoryBytes  int64   `json:"memory_bytes"` // unified memory
	WorkingSet   int64   `json:"working_set_bytes"`
	Threadgroup  int     `json:"max_threadgroup_bytes"`
	GPUFamily    string  `json:"gpu_family"`
	GPUCores     int     `json:"gpu_cores"`
	BandwidthGBs float64 `json:"bandwidth_gbs"`
	MatrixTFLOPS float64 `json:"matrix_tflops"` // dense FP16/BF16 peak
	SSDGBs       float64 `json:"ssd_gbs"`       // sequential read, for streamed weights
	// MaxBufferBytes is the largest single device buffer (Metal's
	// maxBufferLength); 0 where unknown.
	MaxBufferBytes int64 `json:"max_buffer_bytes,omitempty"`
	// Source says where WorkingSet came from.
	Source MemorySource `json:"working_set_source"`
	// BudgetBytes, when set, overrides the derived budget (--memory-gb).
	BudgetBytes int64 `json:"budget_override_bytes,omitempty"`
	Detected    bool  `json:"detected,omitempty"`
	// Rates are this machine's measured throughputs (app's calibration and
	// history); nil: priced from MatrixTFLOPS and SSDGBs.
	Rates *Rates `json:"-"`
}

// MemorySource names where a machine's working set came from, so a plan
// can say how far to trust its budget.
type MemorySource string

const (
	// SourceMetal is the Metal device's recommendedMaxWorkingSetSize
	// (metal.Detect, passed in by app): what macOS lets the GPU keep
	// resident, which follows iogpu.wired_limit_mb.
	SourceMetal MemorySource = "metal"
	// SourceSysctl is hw.memsize through Apple's usual rule
	// (recommendedWorkingSet): a Mac whose Metal device was not reported.
	SourceSysctl MemorySource = "sysctl"
	// SourceHost is three quarters of the host's memory: ggml's CPU backend.
	SourceHost MemorySource = "host"
	// SourceCUDA is a discrete GPU's free memory at detection.
	SourceCUDA MemorySource = "cuda"
	// SourceProfile is a built-in profile's memory through Apple's rule
	// (--machine m5-max-128), nothing measured.
	SourceProfile MemorySource = "profile"
	// SourceOverride is the user's budget (--memory-gb); see BudgetSource.
	SourceOverride MemorySource = "override"
)

// Reserve is what the planner keeps out of the working set for everything
// beside the model, which the phases do not count: the process itself
// (Go heap, tokenizer, ggml's contexts and shader library), the window,
// the backend's own allocations beyond the weight and compute buffers, and
// allocator rounding. Measured: a headless tiny render peaks at 172 MB RSS,
// of which at most 56 MB are the model's (CPU backend, Linux); the whole
// app with its window holds 183-193 MB under Xvfb (shared GUI notes); on
// the H200 the CUDA backend held 1.6-1.8 GB beyond its weights and compute
// buffers (docs/PERFORMANCE.md). That is the only device measured, so
// Metal is held to it until a Mac measures its own. 1.8 GB + 0.2 GB,
// rounded up, is 2 GiB (2.15 GB). A constant, not a share: none of these
// grows with the machine's memory.
const Reserve = 2 << 30

// Budget is the memory a plan may use at any instant: the working set
// (what the GPU may keep resident without paging) less Reserve, or the
// user's override. vpipe's 64 GB report shows the working set (~48 GB
// there), not the RAM, is the line mapped weights hit; its zero-swap runs
// kept an 8 GB residency reserve out of the 64, and 48 GB less Reserve
// leaves more than that.
func (m Machine) Budget() int64 {
	if m.BudgetBytes > 0 {
		return m.BudgetBytes
	}
	return max(0, m.WorkingSet-Reserve)
}

// BudgetSource is where Budget comes from: SourceOverride when the user set
// it, otherwise the working set's Source.
func (m Machine) BudgetSource() MemorySource {
	if m.BudgetBytes > 0 {
		return SourceOverride
	}
	return m.Source
}

// recommendedWorkingSet mirrors Metal's recommendedMaxWorkingSetSize on
// Apple silicon: two thirds of memory up to 32 GiB, three quarters above
// (e.g. 10.7 GiB on 16 GiB, 48 GiB on 64, 96 GiB on 128). It is the
// fallback: on a Mac, app passes Metal's own figure to Detect.
func recommendedWorkingSet(mem int64) int64 {
	if mem <= 32*gib {
		return mem * 2 / 3
	}
	return mem * 3 / 4
}

// chip is one Apple-silicon variant, top GPU bin.
type chip struct {
	gen, variant string // "m3", "max"; variant "air" names the base chip
	name         string
	family       string
	cores        int
	ghz          float64
	flopsPerClk  float64 // FP16 FLOP per GPU core per clock (M5: matrix units)
	bandwidth    float64
	ssd          float64
	memories     []int // GiB configurations sold
}

// Sources: Apple specifications for cores, bandwidth and memory sizes;
// FLOP rates as in the shared perf notes (128 FMA/core/clock through M4,
// 1024 FP16 FLOP/core/clock on M5's matrix units); SSD rates are typical
// sequential reads (h3.c measured 13-14.6 GiB/s on an M5 Max).
var chips = []chip{
	{"m1", "air", "M1", "apple7", 8, 1.278, 256, 68, 2.8, []int{8, 16}},
	{"m1", "pro", "M1 Pro", "apple7", 16, 1.296, 256, 200, 5, []int{16, 32}},
	{"m1", "max", "M1 Max", "apple7", 32, 1.296, 256, 400, 5, []int{32, 64}},
	{"m1", "ultra", "M1 Ultra", "apple7", 64, 1.296, 256, 800, 5.5, []int{64, 128}},
	{"m2", "air", "M2", "apple8", 10, 1.398, 256, 100, 3, []int{8, 16, 24}},
	{"m2", "pro", "M2 Pro", "apple8", 19, 1.398, 256, 200, 5.5, []int{16, 32}},
	{"m2", "max", "M2 Max", "apple8", 38, 1.398, 256, 400, 5.5, []int{32, 64, 96}},
	{"m2", "ultra", "M2 Ultra", "apple8", 76, 1.398, 256, 800, 6, []int{64, 128, 192}},
	{"m3", "air", "M3", "apple9", 10, 1.38, 256, 100, 3, []int{8, 16, 24}},
	{"m3", "pro", "M3 Pro", "apple9", 18, 1.38, 256, 150, 5.5, []int{18, 36}},
	{"m3", "max", "M3 Max", "apple9", 40, 1.4, 256, 400, 6, []int{36, 48, 64, 96, 128}},
	{"m3", "ultra", "M3 Ultra", "apple9", 80, 1.4, 256, 819, 6.5, []int{96, 256, 512}},
	{"m4", "air", "M4", "apple9", 10, 1.58, 256, 120, 3.5, []int{16, 24, 32}},
	{"m4", "pro", "M4 Pro", "apple9", 20, 1.68, 256, 273, 6.5, []int{24, 48, 64}},
	{"m4", "max", "M4 Max", "apple9", 40, 1.58, 256, 546, 7, []int{36, 48, 64, 128}},
	{"m5", "air", "M5", "apple10", 10, 1.7, 1024, 153, 6, []int{16, 24, 32}},
	{"m5", "pro", "M5 Pro", "apple10", 20, 1.7, 1024, 307, 12, []int{24, 48, 64}},
	{"m5", "max", "M5 Max", "apple10", 40, 1.7, 1024, 614, 14, []int{36, 48, 64, 128}},
}

func (c chip) machine(memGiB int) Machine {
	mem := int64(memGiB) * gib
	return Machine{
		Name:         fmt.Sprintf("%s-%s-%d", c.gen, c.variant, memGiB),
		Chip:         c.name,
		MemoryBytes:  mem,
		WorkingSet:   recommendedWorkingSet(mem),
		Source:       SourceProfile,
		Threadgroup:  32 << 10, // every Apple GPU so far: maxThreadgroupMemoryLength
		GPUFamily:    c.family,
		GPUCores:     c.cores,
		BandwidthGBs: c.bandwidth,
		MatrixTFLOPS: float64(c.cores) * c.ghz * c.flopsPerClk / 1000,
		SSDGBs:       c.ssd,
	}
}

// Machines lists every built-in profile, sorted by name.
func Machines() []Machine {
	var out []Machine
	for _, c := range chips {
		for _, m := range c.memories {
			out = append(out, c.machine(m))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupMachine finds a profile by name: "m5-max-128", "m3-ultra-96",
// "m4-pro-64", "m5-air-16" ("m5-16" and "m5-base-16" also name the base
// chip). A size the chip was not sold with is accepted (a profile is
// synthesised) so that odd configurations still plan. "auto" is not a
// profile: the running machine is Detect's, with the GPU app reports.
func LookupMachine(name string) (Machine, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	if n == "auto" || n == "" {
		return Machine{}, fmt.Errorf("plan: machine %q is detected, not looked up (app.LookupMachine, plan.Detect)", name)
	}
	parts := strings.Split(n, "-")
	if len(parts) == 2 {
		parts = []string{parts[0], "air", parts[1]}
	}
	if len(parts) != 3 {
		return Machine{}, fmt.Errorf("plan: unknown machine %q (try m5-max-128, m3-ultra-96, m4-pro-64 or auto)", name)
	}
	if parts[1] == "base" {
		parts[1] = "air"
	}
	gb, err := strconv.Atoi(parts[2])
	if err != nil || gb < 4 || gb > 4096 {
		return Machine{}, fmt.Errorf("plan: machine %q: memory %q is not a size in GB", name, parts[2])
	}
	for _, c := range chips {
		if c.gen == parts[0] && c.variant == parts[1] {
			return c.machine(gb), nil
		}
	}
	return Machine{}, fmt.Errorf("plan: unknown chip in machine %q (chips: m1..m5 with air|pro|max|ultra; no M4/M5 Ultra exists)", name)
}

// chipByBrand maps a CPU brand string ("Apple M3 Max") to a chip.
func chipByBrand(brand string) (chip, bool) {
	b := strings.ToLower(brand)
	for i := len(chips) - 1; i >= 0; i-- {
		c := chips[i]
		want := strings.ToLower(c.name)
		if c.variant == "air" {
			// The base chip's brand is just "Apple M3": match it exactly.
			if strings.TrimSpace(strings.TrimPrefix(b, "apple ")) == want {
				return c, true
			}
			continue
		}
		if strings.Contains(b, want) {
			return c, true
		}
	}
	// A newer Apple chip than the table knows: plan it as the newest of
	// its variant rather than as a CPU.
	if strings.HasPrefix(b, "apple m") {
		variant := "air"
		for _, v := range []string{"pro", "max", "ultra"} {
			if strings.HasSuffix(b, " "+v) {
				variant = v
			}
		}
		for i := len(chips) - 1; i >= 0; i-- {
			if chips[i].variant == variant {
				return chips[i], true
			}
		}
	}
	return chip{}, false
}

// WithMemoryGB returns m as if it had gb of unified memory (a Mac that
// does not exist here, so nothing is measured: Apple's rule).
func (m Machine) WithMemoryGB(gb int) Machine {
	m.MemoryBytes = int64(gb) * gib
	m.WorkingSet = recommendedWorkingSet(m.MemoryBytes)
	m.Source = SourceProfile
	m.BudgetBytes = 0
	return m
}

// Mac reports whether m is Apple silicon: detected as one, or a built-in
// profile (every profile is a Mac). People are told "this Mac" only then.
func (m Machine) Mac() bool {
	switch m.Source {
	case SourceMetal, SourceSysctl, SourceProfile:
		return true
	}
	return false
}

// WithBudgetGB returns m with its budget overridden (--memory-gb).
func (m Machine) WithBudgetGB(gb float64) Machine {
	m.BudgetBytes = int64(gb * gib)
	return m
}
