//go:build long

package textenc

import (
	"testing"

	"h3studio/engine/ggml"
)

// TestSeedLengthF32 is the seed length with f32 K/V, odd chunking (row
// groups that are not a multiple of the chunk) and the tight tolerance.
func TestSeedLengthF32(t *testing.T) {
	checkLength(t, SeedLength, ggml.StoreAs(ggml.F32), 200, 3000, tolF32)
}

// TestLength64K is 65,536 tokens: past ggml-metal's 65,535-row limit of a
// single attention call, with the backend's K/V type.
func TestLength64K(t *testing.T) {
	checkLength(t, 65536, ggml.Storage{}, 0, 0, tolBF16)
}
