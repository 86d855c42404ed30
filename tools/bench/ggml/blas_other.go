//go:build !linux || !cgo

package main

// openBLASGFLOPS: the OpenBLAS reference is measured on Linux (Debian's
// libopenblas-dev) only.
func openBLASGFLOPS(n, reps int) (float64, bool) { return 0, false }
