package ggml

import (
	"math"
	"testing"
)

// seededWant recomputes a FillSeeded weight on the host from the pool and
// windows the fill is documented to use.
func seededWant(t *testing.T, pool []float32, seed uint64, name string, n, rows int, in Init) []float32 {
	t.Helper()
	wins, err := SeedWindows(seed, name, n, rows)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, 0, n*rows)
	for _, w := range wins {
		for _, u := range pool[w.Offset : w.Offset+n*w.Rows] {
			want = append(want, in.Mean+in.Std*u)
		}
	}
	return want
}

func TestFillSeeded(t *testing.T) {
	b, err := NewBackend(BackendOptions{Device: DeviceCPU, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	const seed = 11
	// big spans two windows (70,000 rows of 64 > seedChunkLen elements).
	cases := []struct {
		name    string
		dt      DType
		n, rows int
		in      Init
		tol     float64 // max abs error against the f32 host values
	}{
		{"big", F32, 64, 70000, Init{Std: 0.5}, 0},
		{"gain", F32, 96, 1, Init{Mean: 1, Std: 0.2}, 0},
		{"w.bf16", BF16, 96, 7, Init{Std: 0.1}, 0.1 * 1.8 / 128},
		{"w.q8_0", Q8_0, 64, 5, Init{Std: 0.1}, 0.1 * 1.8 / 127},
	}
	ws := b.NewWeightSet(len(cases))
	defer ws.Free()
	inits := map[string]Init{}
	for _, c := range cases {
		ws.Add(c.name, c.dt, c.n, c.rows)
		inits[c.name] = c.in
	}
	if err := ws.Alloc(); err != nil {
		t.Fatal(err)
	}
	if err := ws.FillSeeded(seed, func(w *Tensor) Init { return inits[w.Name()] }); err != nil {
		t.Fatal(err)
	}
	pool := SeedPool(seed)
	for _, c := range cases {
		w := ws.Get(c.name)
		got := Dequantize(c.dt, w.Raw(), c.n*c.rows)
		want := seededWant(t, pool, seed, c.name, c.n, c.rows, c.in)
		worst, mean := 0.0, 0.0
		for i := range want {
			worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
			mean += float64(got[i])
		}
		mean /= float64(len(want))
		t.Logf("%s %s: max abs error %.2g (tolerance %.2g), mean %.3f", c.name, c.dt, worst, c.tol, mean)
		if worst > c.tol {
			t.Errorf("%s: max abs error %g > %g", c.name, worst, c.tol)
		}
	}
	wins, _ := SeedWindows(seed, "big", 64, 70000)
	if len(wins) != 3 || wins[0].Offset == wins[1].Offset {
		t.Errorf("big: windows %+v, want 3 with distinct offsets", wins)
	}
	other, _ := SeedWindows(seed+1, "big", 64, 70000)
	if other[0].Offset == wins[0].Offset {
		t.Errorf("seed %d and %d start at the same pool offset %d", seed, seed+1, wins[0].Offset)
	}
}
