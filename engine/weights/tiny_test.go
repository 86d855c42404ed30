package weights

import (
	"path/filepath"
	"slices"
	"testing"

	"h3studio/engine/arch"
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

// The tiny writer's tensors are the ones arch describes for the configs it
// writes: the DiT's names and shapes exactly, and each other component's
// parameter count (what the planner sizes it by).
func TestTinyTensorsMatchArch(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := WriteTiny(dir, TinyOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	s, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := s.Partitions[0]
	m, err := arch.ReadModel(arch.OfficialFiles(p.Dir))
	if err != nil || len(m.Assumed) > 0 {
		t.Fatalf("read the written configs: %v (assumed %v)", err, m.Assumed)
	}
	shapes := map[string]map[string][]int64{}
	for _, c := range p.Components {
		src, err := c.Open()
		if err != nil {
			t.Fatal(err)
		}
		shapes[c.Name] = map[string][]int64{}
		for _, ti := range src.Tensors() {
			shapes[c.Name][ti.Name] = ti.Shape
		}
		src.Close()
	}
	want := m.DiT.Shapes()
	for name, shape := range want {
		if got, ok := shapes[Transformer][name]; !ok || !slices.Equal(got, shape) {
			t.Errorf("transformer %s: written %v, arch %v", name, got, shape)
		}
	}
	if len(shapes[Transformer]) != len(want) {
		t.Errorf("transformer: %d tensors written, arch lists %d", len(shapes[Transformer]), len(want))
	}
	q := m.Qwen.Text
	for _, c := range []struct {
		name string
		want int64
	}{
		{TextEncoder, int64(q.Layers)*q.LayerParams() + 2*q.EmbedParams() + int64(q.Hidden) + m.Qwen.Vision.Params()},
		{VideoVAE, m.VideoVAE.EncoderParams() + m.VideoVAE.DecoderParams()},
		{AudioVAE, m.AudioVAE.Params()},
	} {
		var got int64
		for _, s := range shapes[c.name] {
			n := int64(1)
			for _, d := range s {
				n *= d
			}
			got += n
		}
		if got != c.want {
			t.Errorf("%s: %d parameters written, arch counts %d", c.name, got, c.want)
		}
	}
}
