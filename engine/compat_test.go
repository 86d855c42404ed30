package engine

import (
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

// The tiny snapshot's VAE configs are read by engine/vae as they are, with
// the release's architecture values (no bridging between the writer and
// the reader).
func TestTinyVAEConfigsReadDirectly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := weights.WriteTiny(dir, weights.TinyOptions{Seed: 2}); err != nil {
		t.Fatal(err)
	}
	snap, err := weights.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Partitions[0]
	vc, err := vae.ReadVideoConfig(p.Component(weights.VideoVAE).Config)
	if err != nil {
		t.Fatal(err)
	}
	ac, err := vae.ReadAudioConfig(p.Component(weights.AudioVAE).Config)
	if err != nil {
		t.Fatal(err)
	}
	if vc.LatentChannels != 24 || vc.SpatialRatio() != 16 || ac.Hop() != 800 || ac.Model.Heads != 2 {
		t.Errorf("tiny configs: %d latent channels, ratio %d, hop %d, %d heads", vc.LatentChannels, vc.SpatialRatio(), ac.Hop(), ac.Model.Heads)
	}
}
