// Command vae-bench (make bench) reports the VAE figures issue 8 asks for:
// tiny-config video decode throughput (frames/s) and one real-config video
// decoder tile (GFLOP/s), the latter next to the ggml f16 matmul ceiling
// measured in the same run, since the tile is matmul-bound. The numbers come
// from engine/vae's own Go benchmarks, run through `go test` so that the
// benchmark code is not duplicated here.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"h3studio/engine/ggml"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "vae-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	be, err := ggml.NewBackend(ggml.BackendOptions{})
	if err != nil {
		return err
	}
	ceiling, err := ggml.MatMulGFLOPS(be, ggml.F16, 2048, 2048, 2048, 3)
	be.Close()
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "test", "-tags", "long", "-run", "^$",
		"-bench", "^(BenchmarkVideoDecodeTiny|BenchmarkRealConfigDecoderTile)$", "-benchtime", "3x", "./engine/vae")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go test -bench: %w\n%s", err, out)
	}
	metrics := parse(out)
	fmt.Println("vae bench (CPU backend)")
	fmt.Printf("%-40s %10.1f frames/s\n", "video decode, tiny config", metrics["BenchmarkVideoDecodeTiny frames/s"])
	tile := metrics["BenchmarkRealConfigDecoderTile GFLOP/s"]
	fmt.Printf("%-40s %10.1f GFLOP/s  %5.2fx of the f16 matmul ceiling\n", "real-config decoder tile (7x16x16 latents)", tile, tile/ceiling)
	fmt.Printf("%-40s %10.1f GFLOP/s  1.00x\n", "ggml mul_mat 2048^3 f16 (ceiling)", ceiling)
	return nil
}

// parse reads `go test -bench` lines ("BenchmarkX-2  3  123 ns/op  4.5 unit")
// into "BenchmarkX unit" -> value.
func parse(out []byte) map[string]float64 {
	m := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name, _, _ := strings.Cut(f[0], "-")
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				m[name+" "+f[i+1]] = v
			}
		}
	}
	return m
}
