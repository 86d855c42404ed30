// Package ggmltest opens the backend the model parity tests run on: ggml's
// CPU backend in make test, and the Metal backend when built with the
// metal tag (make mac-test). On Metal the tolerances widen to a
// half-precision backend's, and a test fails if the scheduler placed any
// node of its graphs on the CPU: the check that engine/ggml's hand-copied
// Metal op table cannot drift from ggml-metal unnoticed.
package ggmltest

import (
	"fmt"
	"strings"
	"testing"

	"h3studio/engine/ggml"
)

// HalfTol is the least relative L2 error a parity check allows on Metal,
// which stages matmul and attention operands in half precision (h3.c holds
// its BF16 blocks to rel-max 5e-3).
const HalfTol = 5e-3

// Options adjusts Backend.
type Options struct {
	// Threads is the CPU thread count (0: all cores).
	Threads int
	// Allow excuses a CPU node on Metal, for a fixture shape the release
	// never uses (nil: none is excused).
	Allow func(ggml.Node) bool
}

// Backend opens the test backend and closes it when t ends. On Metal it
// fails t, at its end, for each node the scheduler put on the CPU.
func Backend(t testing.TB, o Options) *ggml.Backend {
	t.Helper()
	dev := ggml.DeviceCPU
	if Metal {
		dev = ggml.DeviceGPU
	}
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: dev, Threads: o.Threads, TrackFallback: Metal})
	if err != nil {
		t.Fatalf("ggmltest: %v", err)
	}
	t.Cleanup(b.Close)
	if Metal {
		t.Cleanup(func() { checkFallback(t, b, o.Allow) })
	}
	return b
}

func checkFallback(t testing.TB, b *ggml.Backend, allow func(ggml.Node) bool) {
	count := map[string]int{}
	var first []ggml.Node
	for _, n := range b.CPUNodes() {
		if allow != nil && allow(n) {
			continue
		}
		if count[n.Desc] == 0 {
			first = append(first, n)
		}
		count[n.Desc]++
	}
	for _, n := range first {
		t.Errorf("ggmltest: the scheduler ran %d %s node(s) on the CPU, first %q %v from %s; ggml-metal does not support it as built", count[n.Desc], n.Desc, n.Name, n.Shape, srcText(n))
	}
}

func srcText(n ggml.Node) string {
	var parts []string
	for _, src := range n.Src {
		parts = append(parts, fmt.Sprintf("%s %v", src.DType, src.Shape))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Tol is the tolerance of a parity check on the test backend: tol on the
// CPU, at least HalfTol on Metal.
func Tol(tol float64) float64 {
	if Metal {
		return max(tol, HalfTol)
	}
	return tol
}
