package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"h3studio/engine/layout"
	"h3studio/engine/vae"
	"h3studio/engine/weights"
)

// TestWithTextRows checks the re-basing against layout.Build itself: a
// layout planned with p prompt tokens and re-based to n text rows must
// equal the layout built for the prompt length that gives n rows.
func TestWithTextRows(t *testing.T) {
	spec := layout.Spec{Canvas: layout.Canvas{Width: 128, Height: 64}, Frames: 56, PromptTokens: 9, Refs: []layout.Ref{
		{Kind: layout.RefImage, Source: layout.Canvas{Width: 300, Height: 200}},
		{Kind: layout.RefVideoAudio, Source: layout.Canvas{Width: 160, Height: 96}, SourceFrames: 60, AudioSeconds: 2.5},
		{Kind: layout.RefAudio, AudioSeconds: 3},
	}}
	l, err := layout.Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []int{-4, 0, 7} {
		want := spec
		want.PromptTokens += d
		wl, err := layout.Build(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := withTextRows(l, l.Qwen.Tokens()+d)
		if err != nil {
			t.Fatal(err)
		}
		if got.Rows != wl.Rows || !reflect.DeepEqual(got.Segments, wl.Segments) || !reflect.DeepEqual(got.Positions(), wl.Positions()) {
			t.Errorf("shift %d: segments %+v\nwant %+v", d, got.Segments, wl.Segments)
		}
	}
	if l.Segments[1].T0 != float64(l.Qwen.Tokens()) {
		t.Fatalf("test premise: the media cursor starts at %v, not at the text length %d", l.Segments[1].T0, l.Qwen.Tokens())
	}
}

func TestPoolableHeads(t *testing.T) {
	for _, c := range []struct{ want, dim, ch, got int }{
		{8, 2048, 32, 8}, // the release: 256 features per head, 8 per channel
		{8, 64, 32, 2},   // the tiny writer's head count on its latent_dim
		{0, 64, 32, 2},
		{4, 96, 32, 3},
		{8, 16, 32, 0},
	} {
		if h := poolableHeads(c.want, c.dim, c.ch); h != c.got {
			t.Errorf("poolableHeads(%d, %d, %d) = %d, want %d", c.want, c.dim, c.ch, h, c.got)
		}
	}
}

// TestTinyConfigsBridge reads the tiny snapshot's VAE configs through the
// bridge, and checks that a config carrying every key (the release's
// spelling) comes out exactly as engine/vae reads it alone.
func TestTinyConfigsBridge(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := weights.WriteTiny(dir, weights.TinyOptions{Seed: 2}); err != nil {
		t.Fatal(err)
	}
	snap, err := weights.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Partitions[0]
	vc, err := readVideoConfig(p.Component(weights.VideoVAE).Config)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := readAudioConfig(p.Component(weights.AudioVAE).Config, nil)
	if err != nil {
		t.Fatal(err)
	}
	if vc.LatentChannels != 24 || vc.SpatialRatio() != 16 || ac.Hop() != 800 || ac.Model.Heads != 2 {
		t.Errorf("tiny configs: %d latent channels, ratio %d, hop %d, %d heads", vc.LatentChannels, vc.SpatialRatio(), ac.Hop(), ac.Model.Heads)
	}
	// Write the bridged audio metadata back (every key present): the bridge
	// must now be the identity.
	full := filepath.Join(t.TempDir(), "audio_vae")
	if err := os.MkdirAll(full, 0o755); err != nil {
		t.Fatal(err)
	}
	cj, err := os.ReadFile(p.Component(weights.AudioVAE).Config)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := json.Marshal(map[string]any{"metadata": map[string]any{"kwargs": ac.Model}})
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"config.json": cj, "metadata.json": meta} {
		if err := os.WriteFile(filepath.Join(full, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	direct, err := vae.ReadAudioConfig(filepath.Join(full, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	bridged, err := readAudioConfig(filepath.Join(full, "config.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(direct, bridged) {
		t.Errorf("bridge changed a complete config:\n%+v\n%+v", bridged, direct)
	}
}

func TestCacheEvictsLeastRecent(t *testing.T) {
	c := newCache(2)
	c.put("a", 1)
	c.put("b", 2)
	c.get("a")
	c.put("c", 3)
	if _, ok := c.get("b"); ok {
		t.Error("b survived though least recently used")
	}
	for _, k := range []string{"a", "c"} {
		if _, ok := c.get(k); !ok {
			t.Errorf("%s was evicted", k)
		}
	}
	off := newCache(-1)
	off.put("a", 1)
	if _, ok := off.get("a"); ok {
		t.Error("a disabled cache kept a value")
	}
}
