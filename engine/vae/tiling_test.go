package vae

import (
	"context"
	"math"
	"runtime"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
)

func TestSplitTilesCover(t *testing.T) {
	for _, c := range []struct{ n, ts, ov, unit int }{
		{48, 32, 16, 16}, {64, 32, 16, 16}, {80, 32, 16, 16}, {32, 32, 16, 16},
		{768, 256, 64, 16}, {1344, 256, 64, 16}, {480, 320, 64, 16}, {1536, 320, 64, 16}, {256, 256, 64, 16},
	} {
		p := splitTiles(c.n, c.ts, c.ov, c.unit)
		last := len(p.starts) - 1
		if p.starts[0] != 0 || p.starts[last]+p.sizes[last] != c.n {
			t.Errorf("%+v: tiles %v x %v do not span [0, %d)", c, p.starts, p.sizes, c.n)
		}
		for i, o := range p.overlaps {
			if o < c.ov || o%c.unit != 0 || p.starts[i]+p.sizes[i]-p.starts[i+1] != o {
				t.Errorf("%+v: overlap %d = %d inconsistent with starts %v", c, i, o, p.starts)
			}
		}
		if c.ts >= c.n && len(p.starts) != 1 {
			t.Errorf("%+v: %d tiles for an axis the tile covers", c, len(p.starts))
		}
	}
}

// Frame counts of the release: 5n+2 latents decode to 17n+5 frames
// (shared/H3-FACTS.md §3, from h3.c and the reference), one latent to one image.
func TestTemporalPlanFrames(t *testing.T) {
	cfg := releaseVideoConfig(t)
	for _, c := range []struct{ latents, frames, chunks int }{
		{1, 1, 0}, {7, 22, 1}, {12, 39, 2}, {17, 56, 3}, {32, 107, 6}, {37, 124, 7}, {72, 243, 14}, {107, 362, 21},
	} {
		if c.latents == 1 {
			continue // the image path; checked by Frames below
		}
		p := newTemporalPlan(c.latents, cfg)
		if p.frames != c.frames || p.chunks != c.chunks {
			t.Errorf("%d latents: %d frames in %d chunks, want %d in %d", c.latents, p.frames, p.chunks, c.frames, c.chunks)
		}
	}
	d := &VideoDecoder{cfg: cfg}
	if d.Frames(1) != 1 {
		t.Errorf("1 latent decodes to %d frames, want 1", d.Frames(1))
	}
}

// releaseVideoConfig is the release's configuration as the snapshot states it.
func releaseVideoConfig(t testing.TB) *VideoConfig {
	t.Helper()
	cfg, err := arch.ReleaseVideoVAE()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestDecodeTileFitsBudget(t *testing.T) {
	cfg := releaseVideoConfig(t)
	full := TileBytes(cfg, 256)
	t.Logf("release decoder call at 256 px: %.2f GiB of activations (estimate), %d tokens", float64(full)/(1<<30), 7*16*16+5)
	if got := DecodeTile(cfg, DecodeOptions{}); got != 256 {
		t.Errorf("no budget: tile %d, want the config's 256", got)
	}
	for _, budget := range []int64{full, full / 2, full / 4, 1} {
		ts := DecodeTile(cfg, DecodeOptions{MemoryBudget: budget})
		if ts%16 != 0 || ts < 2*cfg.TileOverlapMin || ts > 256 {
			t.Errorf("budget %d: tile %d out of range", budget, ts)
		}
		if ts > 2*cfg.TileOverlapMin && TileBytes(cfg, ts) > budget {
			t.Errorf("budget %d: tile %d needs %d bytes", budget, ts, TileBytes(cfg, ts))
		}
		t.Logf("budget %6.0f MiB -> tile %d px (%6.0f MiB)", float64(budget)/(1<<20), ts, float64(TileBytes(cfg, ts))/(1<<20))
	}
}

// The tiled and untiled decodes of one latent differ by the blend of tile
// seams; ours must differ exactly as the reference's do.
func TestVideoDecodeTiledVsUntiled(t *testing.T) {
	untiledRef, _ := fixtureTensor(t, openFixture(t, "video_decode"), "output.pixels")
	tiledRef, _ := fixtureTensor(t, openFixture(t, "video_decode_tiled"), "output.pixels")
	zd, zs := fixtureTensor(t, openFixture(t, "video_decode"), "input.latent")
	z := latentFrom(zd, zs)
	var clips [2]Clip
	for i, ts := range []int{1 << 20, 0} {
		d, _ := newTestDecoder(t, DecodeOptions{Precision: exactKV, TileSize: ts})
		c, err := d.DecodeClip(context.Background(), z)
		if err != nil {
			t.Fatal(err)
		}
		clips[i] = c
	}
	ours, ref := relL2(clips[1].Data, clips[0].Data), relL2(tiledRef, untiledRef)
	t.Logf("tiled vs untiled rel L2: ours %.4g, reference %.4g", ours, ref)
	if math.Abs(ours-ref) > tolBlendF32*ref+1e-6 {
		t.Errorf("tiled-vs-untiled gap %.6g differs from the reference's %.6g", ours, ref)
	}
}

// Peak memory of a decode depends on the tile, not on the clip length: the
// largest decoder graph and the live Go heap during the decode are the same
// for 2 temporal chunks (12 latents) and 8 (42 latents).
func TestVideoDecodeMemoryFlat(t *testing.T) {
	type peak struct{ graph, heap uint64 }
	measure := func(steps int) peak {
		d, _ := newTestDecoder(t, DecodeOptions{Precision: exactKV})
		var p peak
		d.inspect = func(g *ggml.Graph) { p.graph = max(p.graph, graphBytes(g)) }
		z := Latent{C: 24, T: steps, H: 2, W: 2, Data: make([]float32, 24*steps*4)}
		for i := range z.Data {
			z.Data[i] = float32(math.Sin(float64(i)))
		}
		var ms runtime.MemStats
		frames := 0
		err := d.Decode(context.Background(), z, func(_ int, _ []float32) error {
			if frames%8 == 0 {
				runtime.GC()
				runtime.ReadMemStats(&ms)
				p.heap = max(p.heap, ms.HeapAlloc)
			}
			frames++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if frames != d.Frames(steps) {
			t.Fatalf("%d latents: %d frames emitted, want %d", steps, frames, d.Frames(steps))
		}
		t.Logf("%2d latents (%d chunks, %3d frames): largest graph %d KiB, live heap %d KiB", steps, d.Calls, frames, p.graph>>10, p.heap>>10)
		return p
	}
	a, b := measure(12), measure(42)
	if a.graph != b.graph {
		t.Errorf("largest decoder graph grew from %d to %d bytes", a.graph, b.graph)
	}
	if float64(b.heap) > 1.25*float64(a.heap)+(1<<20) {
		t.Errorf("live heap grew from %d to %d bytes with the clip length", a.heap, b.heap)
	}
}

// graphBytes sums the bytes of every node that owns data (views excluded):
// an upper bound of the graph's scratch, before ggml's buffer reuse.
func graphBytes(g *ggml.Graph) uint64 {
	var n uint64
	for _, node := range g.Ops() {
		switch node.Op {
		case "VIEW", "RESHAPE", "PERMUTE", "TRANSPOSE", "NONE":
			continue
		}
		e := uint64(node.Shape[0] * node.Shape[1] * node.Shape[2] * node.Shape[3])
		n += e * uint64(node.DType.BlockBytes()) / uint64(node.DType.BlockSize())
	}
	return n
}

// Audio decoded in windows (with context) against the one-graph decode: the
// error falls fast with the context, which the release decoder's receptive
// field sets.
func TestAudioDecodeChunked(t *testing.T) {
	fx := openFixture(t, "audio_decode")
	zd, zs := fixtureTensor(t, fx, "input.latent")
	want, _ := fixtureTensor(t, fx, "output.waveform")
	z := AudioLatent{C: int(zs[1]), T: int(zs[3]), Data: zd}
	var errs []float64
	for _, ctx := range []int{4, 8} {
		a, _ := newTestAudio(t, AudioDecoderPart, AudioOptions{Precision: exactKV, ChunkLatents: 6, ContextLatents: ctx})
		y, err := a.Decode(context.Background(), z)
		if err != nil {
			t.Fatal(err)
		}
		e := relL2(y.Data, want)
		errs = append(errs, e)
		t.Logf("windows of 6 latents, context %d: %d graphs, rel L2 %.3g against the full decode", ctx, a.Calls, e)
	}
	if errs[1] > tolAudioChunk || errs[1] > errs[0]/4 {
		t.Errorf("context 8: rel L2 %.3g (context 4: %.3g); want under %.1g and 4x better", errs[1], errs[0], tolAudioChunk)
	}
}

// Latent lengths off the 5n+2 grid are padded with copies of the last step;
// the first chunk's 17 frames do not depend on the padding.
func TestVideoDecodePaddedLength(t *testing.T) {
	d := loadTestDecoder(t, DecodeOptions{Precision: exactKV})
	zd, zs := fixtureTensor(t, openFixture(t, "video_decode_long"), "input.latent")
	full := latentFrom(zd, zs) // 12 steps at 2x2
	cut := func(n int) Latent {
		per := full.H * full.W
		z := Latent{C: full.C, T: n, H: full.H, W: full.W, Data: make([]float32, full.C*n*per)}
		for c := range full.C {
			copy(z.Data[c*n*per:][:n*per], full.Data[c*full.T*per:][:n*per])
		}
		return z
	}
	a, err := d.DecodeClip(context.Background(), cut(7))
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.DecodeClip(context.Background(), cut(9))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("9 latents (3 padding steps) decode to %d frames", b.T)
	plane := a.H * a.W
	for c := range 3 {
		fa := a.Data[c*a.T*plane:][:17*plane]
		fb := b.Data[c*b.T*plane:][:17*plane]
		if e := relL2(fb, fa); e != 0 {
			t.Errorf("channel %d: the first 17 frames changed with the padding (rel L2 %.3g)", c, e)
		}
	}
}
