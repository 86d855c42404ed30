// Package metal is the Apple side of H3 Studio's compute backend: it reports
// the Metal device's capabilities (recommended working-set size, unified
// memory, GPU family, threadgroup memory, bf16 support) for the planner's
// machine detection, and carries the Metal smoke and performance checks of
// engine/ggml (build tag metal, run by make mac-test and make mac-bench).
// On other systems Detect reports ErrNoDevice.
package metal

import (
	"errors"
	"fmt"
)

// ErrNoDevice means the process has no Metal device: any OS but macOS, a
// build without cgo, or a Mac without a Metal GPU.
var ErrNoDevice = errors.New("metal: no Metal device (Metal needs macOS on Apple silicon and a cgo build)")

// Device describes the system's default Metal device.
type Device struct {
	Name                  string // e.g. "Apple M3 Max"
	RecommendedWorkingSet uint64 // bytes the GPU can keep resident without paging (recommendedMaxWorkingSetSize)
	MaxBufferLength       uint64 // largest single buffer in bytes
	UnifiedMemory         bool   // GPU and CPU share memory
	Family                int    // highest Apple GPU family N of MTLGPUFamilyAppleN (7 = M1, 8 = M2, 9 = M3/M4)
	Metal3                bool   // supports MTLGPUFamilyMetal3
	MaxThreadgroupMemory  int    // bytes of threadgroup memory per threadgroup
	BF16                  bool   // bfloat arithmetic in shaders (ggml's has_bfloat: Metal3 or Apple6)
}

// String summarises the device for logs.
func (d Device) String() string {
	return fmt.Sprintf("%s (Apple%d, %d GiB working set, %d KiB threadgroup memory, bf16=%v, unified=%v)",
		d.Name, d.Family, d.RecommendedWorkingSet>>30, d.MaxThreadgroupMemory>>10, d.BF16, d.UnifiedMemory)
}
