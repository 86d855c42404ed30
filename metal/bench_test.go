//go:build metal

package metal

import (
	"fmt"
	"testing"

	"h3studio/engine/ggml"
)

// Metal timings (make mac-bench): 2048³ matmul per weight dtype and
// non-causal attention with 8 heads of 128, reported as GFLOP/s.

func gpu(b *testing.B) *ggml.Backend {
	be, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceGPU})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(be.Close)
	return be
}

func BenchmarkMatMul(b *testing.B) {
	be := gpu(b)
	for _, dt := range []ggml.DType{ggml.F32, ggml.F16, ggml.BF16, ggml.Q8_0, ggml.Q4_K} {
		b.Run(fmt.Sprintf("2048x2048x2048/%s", dt), func(b *testing.B) {
			var gf float64
			for b.Loop() {
				var err error
				if gf, err = ggml.MatMulGFLOPS(be, dt, 2048, 2048, 2048, 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(gf, "GFLOP/s")
		})
	}
}

func BenchmarkAttention(b *testing.B) {
	be := gpu(b)
	for _, n := range []int{4096, 16384} {
		b.Run(fmt.Sprintf("n%d/8x128/%s", n, be.KVType()), func(b *testing.B) {
			var gf float64
			for b.Loop() {
				var err error
				if gf, _, err = ggml.AttentionGFLOPS(be, n, 8, 128, 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(gf, "GFLOP/s")
		})
	}
}

func TestMetalDevice(t *testing.T) {
	d, err := Detect()
	if err != nil {
		t.Fatal(err)
	}
	be, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceGPU})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	t.Logf("metal: %v; ggml: %+v", d, be.Caps())
	if !be.Caps().GPU {
		t.Error("ggml opened no GPU backend")
	}
}
