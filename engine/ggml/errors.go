package ggml

import "errors"

// ErrOutOfMemory is wrapped by every error a backend's allocation returns:
// a weight set or host mapping the device refuses, and compute buffers the
// scheduler cannot reserve or allocate for a graph. Callers test it with
// errors.Is to tell "this request does not fit" (smaller canvas, streamed
// weights) from a bug; the message around it says what was being placed.
var ErrOutOfMemory = errors.New("ggml: out of memory")

// statusAllocFailed is GGML_STATUS_ALLOC_FAILED (enums.h, checked against
// the C value at compile time in capi_cgo.go): a backend that could not
// allocate while computing.
const statusAllocFailed = -2
