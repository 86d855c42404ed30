// Command ggml-bench (make bench) measures engine/ggml's CPU kernels: a
// 2048³ matmul with f32, bf16 and q8_0 weights, and flash attention at 4096
// and 16384 tokens (8 heads of 128, K/V in the backend's KVType), with the
// machine's OpenBLAS sgemm measured in the same run as the reference the
// matmul ratios are given against (target: f32 and bf16 >= 1.2x).
package main

import (
	"fmt"
	"os"
	"runtime"
	"time"

	"h3studio/engine/ggml"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ggml-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	be, err := ggml.NewBackend(ggml.BackendOptions{})
	if err != nil {
		return err
	}
	defer be.Close()
	const n = 2048
	fmt.Printf("ggml bench on %s (%s), %d threads; GFLOP/s, best of 3 unless noted\n", be.Caps().Name, be.Caps().Description, runtime.NumCPU())
	blas, blasOK := openBLASGFLOPS(n, 3)
	if blasOK {
		fmt.Printf("%-34s %8.1f   1.00x\n", "OpenBLAS sgemm 2048^3", blas)
	} else {
		fmt.Printf("%-34s %8s\n", "OpenBLAS sgemm 2048^3", "n/a")
	}
	for _, dt := range []ggml.DType{ggml.F32, ggml.BF16, ggml.Q8_0} {
		gf, err := ggml.MatMulGFLOPS(be, dt, n, n, n, 3)
		if err != nil {
			return err
		}
		ratio := "   -"
		if blasOK {
			ratio = fmt.Sprintf("%6.2fx", gf/blas)
		}
		fmt.Printf("%-34s %8.1f %s\n", "ggml mul_mat 2048^3 "+dt.String()+" weights", gf, ratio)
	}
	for _, tokens := range []int{4096, 16384} { // single runs: seconds each, warm-up is noise
		gf, d, err := ggml.AttentionGFLOPS(be, tokens, 8, 128, 0)
		if err != nil {
			return err
		}
		fmt.Printf("%-34s %8.1f   (%s, %s K/V, single run)\n", fmt.Sprintf("ggml flash attn %d x 8x128", tokens), gf,
			d.Round(time.Millisecond), be.KVType())
	}
	return nil
}
