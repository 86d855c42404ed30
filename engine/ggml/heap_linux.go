//go:build cgo && linux

package ggml

/*
#include <malloc.h>
*/
import "C"

// ReleaseFreedHeap hands the C heap's free pages back to the kernel.
// glibc raises its mmap threshold to the size of each large block freed
// (up to 32 MB), so after the first render a phase's graph and backend
// buffers come from the heap, and what they leave when freed stays
// resident: a queue of 64x64 renders grew 32 % from the third to the
// twentieth with the Go heap flat. Call it when a render ends, not per
// step: the trim walks every arena.
func ReleaseFreedHeap() { C.malloc_trim(0) }
