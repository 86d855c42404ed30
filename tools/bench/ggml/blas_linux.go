//go:build linux && cgo

package main

/*
#cgo LDFLAGS: -lopenblas
void cblas_sgemm(int order, int transa, int transb, int m, int n, int k, float alpha, const float *a, int lda,
	const float *b, int ldb, float beta, float *c, int ldc);
*/
import "C"

import (
	"math/rand/v2"
	"time"
)

const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
	cblasTrans    = 112
)

// openBLASGFLOPS times C = A·Bᵀ for n x n float32 matrices with OpenBLAS
// (the same product ggml's mul_mat computes) and returns the best GFLOP/s.
func openBLASGFLOPS(n, reps int) (float64, bool) {
	r := rand.New(rand.NewPCG(3, 3))
	a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
	for i := range a {
		a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
	}
	best := 0.0
	for i := range reps + 1 { // the first run warms up
		t0 := time.Now()
		C.cblas_sgemm(cblasRowMajor, cblasNoTrans, cblasTrans, C.int(n), C.int(n), C.int(n), 1,
			(*C.float)(&a[0]), C.int(n), (*C.float)(&b[0]), C.int(n), 0, (*C.float)(&c[0]), C.int(n))
		if s := time.Since(t0).Seconds(); i == 1 || (i > 1 && s < best) {
			best = s
		}
	}
	return 2 * float64(n) * float64(n) * float64(n) / best / 1e9, true
}
