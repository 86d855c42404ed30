//go:build cgo

package ggml

/*
// The flags cgo compiles this preamble with are the ones it compiles
// ggml's CPU kernels with (CGO_CFLAGS applies to every cgo package).
static int h3_kernels_vectorised(void) {
#if defined(__x86_64__) && !(defined(__AVX2__) && defined(__FMA__))
	return 0;
#else
	return 1;
#endif
}
*/
import "C"

// CPUKernelsVectorised reports whether this binary's ggml CPU kernels were
// compiled for the wide vector units the Makefile asks for: AVX2 and FMA
// on x86-64 (arm64's NEON is always there). ggml's cgo directives pass no
// -march, so a plain `go test` or `go build` on x86 gets baseline SSE2
// kernels, several times slower; a timing taken from such a build says
// nothing about the product's speed.
func CPUKernelsVectorised() bool { return C.h3_kernels_vectorised() == 1 }
