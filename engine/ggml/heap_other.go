//go:build !cgo || !linux

package ggml

// ReleaseFreedHeap is a no-op where the C allocator is not glibc's (or
// there is no C): macOS's malloc returns large freed blocks by itself.
func ReleaseFreedHeap() {}
