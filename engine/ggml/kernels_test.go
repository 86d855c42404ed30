package ggml

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// The C compiler's view of the kernels' flags agrees with the flags the
// Go toolchain recorded for this build: make's x86-64-v3 (AVX2 and FMA)
// gives vectorised kernels, no flags give SSE2 ones on x86.
func TestCPUKernelsVectorisedFollowsTheBuildFlags(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("only x86-64 has a baseline without AVX2")
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Skip("no build info")
	}
	flags := map[string]string{}
	for _, s := range bi.Settings {
		flags[s.Key] = s.Value
	}
	cflags := flags["CGO_CFLAGS"]
	var want bool
	switch {
	case strings.Contains(cflags, "-march=x86-64-v3"):
		want = true
	case strings.TrimSpace(cflags) == "":
		want = false
	default:
		t.Skipf("CGO_CFLAGS %q: not one of the two builds this test knows", cflags)
	}
	if got := CPUKernelsVectorised(); got != want {
		t.Errorf("CPUKernelsVectorised() = %v under CGO_CFLAGS %q, want %v", got, cflags, want)
	}
}
