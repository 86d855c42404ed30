package textenc

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"h3studio/engine/ggml"
)

// SeedLength is the sequence at which h3.c's Qwen encoder failed ("causal
// attention sequence 10231 exceeds threadgroup memory").
const SeedLength = 10231

// textInput is a text-only presentation of n random ids (no vision pads).
func textInput(f *fixture, n int, seed int64) Input {
	rng := rand.New(rand.NewSource(seed))
	in := Input{IDs: make([]int32, n), Positions: make([][3]int, n)}
	for i := range in.IDs {
		in.IDs[i] = int32(rng.Intn(f.cfg.VisionStart))
		in.Positions[i] = [3]int{i, i, i}
	}
	return in
}

// TestSeedLength runs the h3.c crash length through one tiny layer as the
// CPU backend runs it by default (bf16 K/V, 512-row chunks, 4096-row
// graphs) and checks sampled rows, at chunk and graph edges, against the
// float64 reference.
func TestSeedLength(t *testing.T) {
	checkLength(t, SeedLength, ggml.Storage{}, 0, 0, tolBF16)
}

// checkLength encodes n random tokens through layer 0 and compares rows
// at chunk and group edges with the float64 reference.
func checkLength(t *testing.T, n int, kv ggml.Storage, chunk, group int, tol float64) {
	f := openFixture(t)
	b := newBackend(t)
	in := textInput(f, n, 1)
	m := newFixtureModel(t, f, b, Options{Layers: 1, Precision: ggml.Precision{Weights: ggml.StoreAs(ggml.F32), KV: kv}, QueryChunk: chunk, RowGroup: group})
	t0 := time.Now()
	out, err := m.Encode(context.Background(), in)
	if err != nil {
		t.Fatalf("%d tokens: %v", n, err)
	}
	t.Logf("%d tokens through 1 layer in %v (peak RSS %d MiB)", n, time.Since(t0).Round(time.Millisecond), peakRSS()>>20)
	got := out.Hidden
	for i, v := range got {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("value %d is %v", i, v)
		}
	}
	r := newRef64(t, f)
	D := f.cfg.Text.Hidden
	var pos [3][]int32
	for a := range pos {
		pos[a] = make([]int32, n)
		for i := range pos[a] {
			pos[a][i] = int32(i)
		}
	}
	var rows []int
	for _, s := range []int{0, 511, 512, 4095, 4096, 8191, 8192, 32767, 32768, n - 1} {
		if s < n {
			rows = append(rows, s)
		}
	}
	want := r.textLayerRows64(0, r.embed64(in.IDs), n, pos, rows)
	for i, s := range rows {
		e := relL2f64(want[i], got[s*D:(s+1)*D])
		t.Logf("row %5d: rel L2 vs float64 %.2e", s, e)
		if e > tol {
			t.Errorf("row %d: rel L2 %.3g > %g", s, e, tol)
		}
	}
}

// peakRSS is the process's peak resident set (VmHWM), 0 where unknown.
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}
