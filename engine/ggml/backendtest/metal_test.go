//go:build metal

package backendtest

import (
	"slices"
	"testing"

	"h3studio/engine/ggml"
)

// TestMetal runs the suite on the Metal backend (make mac-test): each case
// against its float64 reference, against the CPU backend on the same
// inputs, and with no CPU split for cases the audit calls Metal-safe.
func TestMetal(t *testing.T) {
	gpu, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceGPU})
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	t.Logf("device: %+v", gpu.Caps())
	c := cpu(t)
	for i, cs := range Cases() {
		t.Run(cs.Name, func(t *testing.T) {
			m, err := Run(gpu, cs, uint64(i+1))
			if err != nil {
				t.Fatal(err)
			}
			if len(cs.Fallback) == 0 && gpu.Splits() > 1 {
				t.Errorf("graph ran in %d splits: some node fell back to the CPU", gpu.Splits())
			}
			ref, err := Run(c, cs, uint64(i+1))
			if err != nil {
				t.Fatal(err)
			}
			vsCPU := NMSE(m.Got, toF64(ref.Got))
			t.Logf("metal nmse %.3g vs reference, %.3g vs cpu (tol %.0e)", m.NMSE, vsCPU, cs.Tol)
			// Metal stages matmul and attention operands in half precision
			tol := max(cs.Tol, TolF16)
			if !(m.NMSE <= 10*tol) {
				t.Errorf("metal nmse %.3g vs reference exceeds %.0e", m.NMSE, 10*tol)
			}
			if !(vsCPU <= 10*tol) {
				t.Errorf("metal nmse %.3g vs the CPU backend exceeds %.0e", vsCPU, 10*tol)
			}
		})
	}
}

func TestMetalCausalAttention10231(t *testing.T) {
	gpu, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceGPU})
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	causalLong(t, gpu, 10231)
}

func toF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

// The scheduler's own placement, as CPUNodes reports it, agrees with the
// audit: a case the audit expects on the CPU shows its op there, a
// Metal-safe case shows none. This is the positive control for the
// model fixtures' no-CPU-node check under make mac-test.
func TestMetalCPUNodes(t *testing.T) {
	for _, cs := range Cases() {
		if cs.Name != "interpolate_bilinear_cpu" && cs.Name != "mul_mat/f32" {
			continue
		}
		t.Run(cs.Name, func(t *testing.T) {
			gpu, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceGPU, TrackFallback: true})
			if err != nil {
				t.Fatal(err)
			}
			defer gpu.Close()
			if _, err := Run(gpu, cs, 1); err != nil {
				t.Fatal(err)
			}
			var ops []string
			for _, n := range gpu.CPUNodes() {
				ops = append(ops, n.Op)
			}
			t.Logf("on the CPU: %v (audit expects %v)", ops, cs.Fallback)
			if len(cs.Fallback) == 0 && len(ops) > 0 {
				t.Errorf("a Metal-safe case ran %v on the CPU", ops)
			}
			for _, want := range cs.Fallback {
				if !slices.Contains(ops, want) {
					t.Errorf("the audit expects %s on the CPU; the scheduler put %v there", want, ops)
				}
			}
		})
	}
}
