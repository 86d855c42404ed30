//go:build !cgo

package ggml

// CPUKernelsVectorised is false without cgo: there are no ggml kernels.
func CPUKernelsVectorised() bool { return false }
