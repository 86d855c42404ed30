package textenc

import (
	"context"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
)

// The prefill bench runs the production layer loop on seeded layers with
// the release's structure at a narrow width, and counts what it holds and
// computes exactly.
func TestPrefillBench(t *testing.T) {
	cfg, err := arch.ReleaseQwen()
	if err != nil {
		t.Fatal(err)
	}
	tc := &cfg.Text
	tc.Hidden, tc.Intermediate, tc.Heads, tc.KVHeads = 256, 512, 4, 2
	cfg.Vision.OutHidden = tc.Hidden
	b := newBackend(t)
	pb, err := NewPrefillBench(b, cfg, 2, ggml.BF16, 1, Options{RowGroup: 128, QueryChunk: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer pb.Close()
	params := 256*512 + 2*256*256 + 512*256 + 3*256*512 // q, k+v, o, MLP
	if want := 2 * (2*params + 4*(2*256+2*128)); pb.Bytes() != want {
		t.Errorf("2 layers hold %d bytes, want %d", pb.Bytes(), want)
	}
	const S = 300
	if want := 2 * (2*S*float64(params) + 2*S*S*512); pb.Flops(S) != want {
		t.Errorf("Flops(%d) = %g, want %g", S, pb.Flops(S), want)
	}
	if d, err := pb.Run(context.Background(), S); err != nil || d <= 0 {
		t.Fatalf("Run(%d) = %v, %v", S, d, err)
	}
	if _, err := pb.Run(context.Background(), 0); err == nil {
		t.Error("a prefill of 0 tokens ran")
	}
}
