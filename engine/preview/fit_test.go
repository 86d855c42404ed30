package preview

import (
	"math"
	"math/rand/v2"
	"testing"
)

// planted is a known map: colour k = Σ w[k][c]·x[c] + w[k][C].
func planted(r *rand.Rand, c int) [3][]float64 {
	var w [3][]float64
	for k := range w {
		w[k] = make([]float64, c+1)
		for i := range w[k] {
			w[k][i] = r.NormFloat64()
		}
	}
	return w
}

func apply(w [3][]float64, x []float32) [3]float64 {
	var out [3]float64
	c := len(x)
	for k := range out {
		out[k] = w[k][c]
		for i, v := range x {
			out[k] += w[k][i] * float64(v)
		}
	}
	return out
}

func randomCells(r *rand.Rand, n, c int) [][]float32 {
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, c)
		for j := range xs[i] {
			xs[i][j] = float32(r.NormFloat64())
		}
	}
	return xs
}

// Colours that are exactly linear in the latent give back the map that
// made them.
func TestFitRecoversPlantedMap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const c = 24
	w := planted(r, c)
	f := NewFitter(c)
	for _, x := range randomCells(r, 500, c) {
		f.Add(x, apply(w, x))
	}
	m, err := f.Map()
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for k := range w {
		for i := range w[k] {
			worst = math.Max(worst, math.Abs(m.RGB[k][i]-w[k][i]))
		}
	}
	t.Logf("max coefficient error %.3g", worst)
	if worst > 1e-9 {
		t.Fatalf("fit is off the planted map by %g", worst)
	}
}

// With as many samples as coefficients the least-squares map is the one
// solution of the square system: it reproduces every sample exactly.
func TestFitSquareSystemIsDirectSolve(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const c = 6
	xs := randomCells(r, c+1, c)
	f := NewFitter(c)
	ys := make([][3]float64, len(xs))
	for i, x := range xs {
		ys[i] = [3]float64{r.Float64(), r.Float64(), r.Float64()}
		f.Add(x, ys[i])
	}
	m, err := f.Map()
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range xs {
		got := m.Colour(x)
		for k := range got {
			if d := math.Abs(got[k] - ys[i][k]); d > 1e-9 {
				t.Fatalf("sample %d colour %d: %g, want %g", i, k, got[k], ys[i][k])
			}
		}
	}
}

// On noisy data the residual is orthogonal to every column of [X 1]: the
// condition that defines the least-squares solution, checked without the
// solver.
func TestFitResidualIsOrthogonal(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const c = 12
	w := planted(r, c)
	xs := randomCells(r, 300, c)
	ys := make([][3]float64, len(xs))
	f := NewFitter(c)
	for i, x := range xs {
		ys[i] = apply(w, x)
		for k := range ys[i] {
			ys[i][k] += 0.3 * r.NormFloat64()
		}
		f.Add(x, ys[i])
	}
	m, err := f.Map()
	if err != nil {
		t.Fatal(err)
	}
	for k := range 3 {
		dots := make([]float64, c+1)
		var scale float64
		for i, x := range xs {
			res := ys[i][k] - m.Colour(x)[k]
			for j, v := range x {
				dots[j] += res * float64(v)
			}
			dots[c] += res
			scale += math.Abs(ys[i][k])
		}
		for j, d := range dots {
			if math.Abs(d) > 1e-9*scale {
				t.Fatalf("colour %d: residual · column %d = %g", k, j, d)
			}
		}
	}
}

func TestFitRefusesUndeterminedMap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	f := NewFitter(3)
	for _, x := range randomCells(r, 50, 3) {
		x[1] = 2 * x[0] // channel 1 never varies on its own
		f.Add(x, [3]float64{1, 2, 3})
	}
	if _, err := f.Map(); err == nil {
		t.Fatal("a map of dependent channels was fitted")
	}
	if _, err := NewFitter(4).Map(); err == nil {
		t.Fatal("a map was fitted from no samples")
	}
}
