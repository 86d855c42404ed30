package plan

import (
	"fmt"
	"strings"
)

// nvidia is one NVIDIA data-centre or desktop GPU, by the substring its
// CUDA device description carries.
type nvidia struct {
	match     string  // substring of the device description, e.g. "H200"
	tflops    float64 // dense BF16 tensor-core peak (no sparsity)
	bandwidth float64 // GB/s of device memory
}

// Sources: NVIDIA's data sheets (dense, not the 2:4-sparse figures they
// headline). Order matters: "H100" must not swallow "H200", so longer and
// newer names come first. The ETA uses these; memory fitting does not.
var nvidias = []nvidia{
	{"H200", 989, 4800},
	{"H100", 989, 3350},
	{"A100", 312, 2039},
	{"L40S", 362, 864},
	{"RTX 4090", 165, 1008},
	{"RTX 3090", 71, 936},
}

// unknownNVIDIA is used for a GPU missing from the table: the throughput
// of a mid-range card, so an ETA is shown rather than none.
var unknownNVIDIA = nvidia{tflops: 50, bandwidth: 500}

// DiscreteGPU is the profile of a machine whose graphs run on a discrete
// GPU (ggml's CUDA backend): the budget is the device memory that was
// free at detection, not the host's, because weights and activations
// live there; description is the device's (e.g. "NVIDIA H200").
func DiscreteGPU(description string, totalBytes, freeBytes int64) Machine {
	spec := unknownNVIDIA
	for _, g := range nvidias {
		if strings.Contains(description, g.match) {
			spec = g
			break
		}
	}
	return Machine{
		Name:         fmt.Sprintf("cuda-%d", (totalBytes+gib/2)/gib),
		Chip:         strings.TrimSpace(description),
		MemoryBytes:  totalBytes,
		WorkingSet:   freeBytes,
		Source:       SourceCUDA,
		Threadgroup:  48 << 10, // CUDA's default shared memory per block
		GPUFamily:    "cuda",
		BandwidthGBs: spec.bandwidth,
		MatrixTFLOPS: spec.tflops,
		SSDGBs:       2,
		Detected:     true,
	}
}
