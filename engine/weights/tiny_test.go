package weights

import (
	"path/filepath"
	"testing"
)

func TestWriteTinyDiscover(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := WriteTiny(dir, TinyOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	s, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Format != FormatOfficial || len(s.Partitions) != 2 || s.Partitions[0].Name != "fl2va" || s.Partitions[1].Name != "ref2va" {
		t.Fatalf("snapshot = %+v", s)
	}
	for _, p := range s.Partitions {
		if p.Component(Transformer).QKV != QKVInterleaved || p.Tokenizer == "" {
			t.Fatalf("partition %s: qkv %q tokenizer %q", p.Name, p.Component(Transformer).QKV, p.Tokenizer)
		}
		for _, c := range p.Components {
			src, err := c.Open()
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range src.Files() {
				if f.DataOffset%16 != 8 {
					t.Errorf("%s: data offset %d, want 8 mod 16", f.Path, f.DataOffset)
				}
			}
			n = len(src.Tensors())
			t.Logf("%s/%s: %d tensors in %d files", p.Name, c.Name, n, len(src.Files()))
			src.Close()
		}
	}
}
