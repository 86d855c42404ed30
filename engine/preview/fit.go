package preview

import (
	"fmt"
	"math"
)

// Fitter accumulates (latent cell, decoded colour) pairs and solves the
// least-squares map. It keeps the normal equations, (C+1)² + 3(C+1)
// float64s, so any number of cells can be added without keeping them.
type Fitter struct {
	c   int
	n   int
	ata []float64    // Σ x̃ x̃ᵀ, x̃ = [x; 1], row-major (C+1)²
	aty [3][]float64 // Σ x̃ y_k per colour
	x   []float64    // scratch x̃
}

// NewFitter starts a fit for latents of c channels.
func NewFitter(c int) *Fitter {
	f := &Fitter{c: c, ata: make([]float64, (c+1)*(c+1)), x: make([]float64, c+1)}
	for k := range f.aty {
		f.aty[k] = make([]float64, c+1)
	}
	return f
}

// Samples is the number of pairs added so far.
func (f *Fitter) Samples() int { return f.n }

// Add adds one latent cell x (len c) and the colour the decoder made of it.
func (f *Fitter) Add(x []float32, rgb [3]float64) {
	if len(x) != f.c {
		panic(fmt.Sprintf("preview: fit sample of %d channels, want %d", len(x), f.c))
	}
	for i, v := range x {
		f.x[i] = float64(v)
	}
	f.x[f.c] = 1
	m := f.c + 1
	for i, xi := range f.x {
		row := f.ata[i*m : (i+1)*m]
		for j := i; j < m; j++ {
			row[j] += xi * f.x[j]
		}
		for k := range f.aty {
			f.aty[k][i] += xi * rgb[k]
		}
	}
	f.n++
}

// Map solves the normal equations by Cholesky. Too few samples, or
// channels that never vary independently, leave the system singular, and
// that is an error rather than an arbitrary map.
func (f *Fitter) Map() (*Map, error) {
	m := f.c + 1
	if f.n < m {
		return nil, fmt.Errorf("preview: %d samples cannot fit %d coefficients", f.n, m)
	}
	a := make([]float64, len(f.ata))
	for i := range m {
		for j := i; j < m; j++ {
			a[i*m+j], a[j*m+i] = f.ata[i*m+j], f.ata[i*m+j]
		}
	}
	l, err := cholesky(a, m)
	if err != nil {
		return nil, fmt.Errorf("preview: fit of %d samples: %w", f.n, err)
	}
	out := &Map{Channels: f.c}
	for k := range out.RGB {
		out.RGB[k] = choleskySolve(l, m, f.aty[k])
	}
	return out, nil
}

// cholesky factors the symmetric a (m x m, row-major) as L Lᵀ. A pivot
// that is not clearly positive, relative to its diagonal entry, means the
// columns are (nearly) dependent.
func cholesky(a []float64, m int) ([]float64, error) {
	const tiny = 1e-12
	l := make([]float64, m*m)
	for j := range m {
		d := a[j*m+j]
		for k := range j {
			d -= l[j*m+k] * l[j*m+k]
		}
		if !(d > tiny*math.Max(a[j*m+j], tiny)) {
			return nil, fmt.Errorf("coefficient %d is not determined by the samples", j)
		}
		l[j*m+j] = math.Sqrt(d)
		for i := j + 1; i < m; i++ {
			s := a[i*m+j]
			for k := range j {
				s -= l[i*m+k] * l[j*m+k]
			}
			l[i*m+j] = s / l[j*m+j]
		}
	}
	return l, nil
}

// choleskySolve solves L Lᵀ x = b.
func choleskySolve(l []float64, m int, b []float64) []float64 {
	y := make([]float64, m)
	for i := range m {
		s := b[i]
		for k := range i {
			s -= l[i*m+k] * y[k]
		}
		y[i] = s / l[i*m+i]
	}
	x := make([]float64, m)
	for i := m - 1; i >= 0; i-- {
		s := y[i]
		for k := i + 1; k < m; k++ {
			s -= l[k*m+i] * x[k]
		}
		x[i] = s / l[i*m+i]
	}
	return x
}
