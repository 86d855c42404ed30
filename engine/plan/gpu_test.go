package plan

import "testing"

func TestDiscreteGPU(t *testing.T) {
	for _, c := range []struct {
		desc   string
		tflops float64
		name   string
	}{
		{"NVIDIA H200", 989, "cuda-140"},
		{"NVIDIA H100 80GB HBM3", 989, "cuda-140"},
		{"NVIDIA GeForce RTX 4090", 165, "cuda-140"},
		{"Some Future GPU", unknownNVIDIA.tflops, "cuda-140"},
	} {
		m := DiscreteGPU(c.desc, 150_000_000_000, 140_000_000_000)
		if m.MatrixTFLOPS != c.tflops || m.Name != c.name || m.GPUFamily != "cuda" {
			t.Errorf("%s: got %s %s %.0f TFLOP/s, want %s cuda %.0f", c.desc, m.Name, m.GPUFamily, m.MatrixTFLOPS, c.name, c.tflops)
		}
		// The budget is the device's free memory, less the planner's reserve.
		if got, want := m.Budget(), int64(140_000_000_000)-Reserve; got != want || m.BudgetSource() != SourceCUDA {
			t.Errorf("%s: budget %d, want %d", c.desc, got, want)
		}
	}
}
