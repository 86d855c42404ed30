package vae

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

func videoConfig(t testing.TB, src weights.Source) *VideoConfig {
	t.Helper()
	md := src.Metadata()
	cfg, err := ParseVideoConfig([]byte(md["video_vae/config.json"]), []byte(md["video_vae/source/config.json"]))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func newTestEncoder(t *testing.T) (*VideoEncoder, *auditor) {
	src := openFixture(t, "video_weights_encoder")
	e, err := LoadVideoEncoder(parityBackend(t), src, videoConfig(t, src))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	a := &auditor{t: t}
	e.inspect = a.inspect
	return e, a
}

func newTestDecoder(t *testing.T, o DecodeOptions) (*VideoDecoder, *auditor) {
	d := loadTestDecoder(t, o)
	a := &auditor{t: t}
	d.inspect = a.inspect
	return d, a
}

func loadTestDecoder(t testing.TB, o DecodeOptions) *VideoDecoder {
	src := openFixture(t, "video_weights_decoder")
	d, err := LoadVideoDecoder(parityBackend(t), src, videoConfig(t, src), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	return d
}

// BenchmarkVideoDecodeTiny decodes 12 latents (39 frames at 32x32) of the
// tiny model with the backend's fast attention.
func BenchmarkVideoDecodeTiny(b *testing.B) {
	d := loadTestDecoder(b, DecodeOptions{})
	fx := openFixture(b, "video_decode_long")
	zd, zs := fixtureTensor(b, fx, "input.latent")
	z := latentFrom(zd, zs)
	frames := 0
	for b.Loop() {
		if err := d.Decode(context.Background(), z, func(int, []float32) error { frames++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
}

func clipFrom(data []float32, shape []int64) Clip {
	// [1, 3, T, H, W] or [1, 3, H, W]
	if len(shape) == 4 {
		return Clip{T: 1, H: int(shape[2]), W: int(shape[3]), Data: data}
	}
	return Clip{T: int(shape[2]), H: int(shape[3]), W: int(shape[4]), Data: data}
}

func latentFrom(data []float32, shape []int64) Latent {
	return Latent{C: int(shape[1]), T: int(shape[2]), H: int(shape[3]), W: int(shape[4]), Data: data}
}

// videoTap converts a ggml [W, H, C, T] tap (shape [T, C, H, W]) to [C][T][H][W].
func videoTap(r *recorder, name string) []float32 {
	s := r.shapes[name]
	return fromGGMLVideo(r.values[name], s[3], s[2], s[1], s[0]).d
}

func TestVideoEncodeImage(t *testing.T) {
	e, a := newTestEncoder(t)
	fx := openFixture(t, "video_image")
	names := []string{"enc.conv_in", "enc.down.0.block.0", "enc.down.0.downsample", "enc.down.2.downsample", "enc.down.5.block.0", "enc.out", "moments"}
	rec := record(names...)
	e.Tap = rec.tap
	px, shape := fixtureTensor(t, fx, "input.pixels")
	z, err := e.EncodeImage(context.Background(), clipFrom(px, shape))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		want, _ := fixtureTensor(t, fx, "tap."+n)
		checkRel(t, n, videoTap(rec, n), want, tolF32)
	}
	want, wshape := fixtureTensor(t, fx, "output.latent")
	if z.C != int(wshape[1]) || z.T != 1 || z.H != int(wshape[3]) || z.W != int(wshape[4]) {
		t.Fatalf("latent %dx%dx%dx%d, want %v", z.C, z.T, z.H, z.W, wshape)
	}
	checkRel(t, "latent (image)", z.Data, want, tolF32)
	a.done()
}

func TestVideoEncodeClips(t *testing.T) {
	e, a := newTestEncoder(t)
	for _, name := range []string{"video_encode", "video_encode_tiled"} {
		fx := openFixture(t, name)
		px, shape := fixtureTensor(t, fx, "input.pixels")
		z, err := e.EncodeVideo(context.Background(), clipFrom(px, shape))
		if err != nil {
			t.Fatal(err)
		}
		want, wshape := fixtureTensor(t, fx, "output.latent")
		if z.T != int(wshape[2]) || z.H != int(wshape[3]) || z.W != int(wshape[4]) {
			t.Fatalf("%s: latent %dx%dx%d, want %v", name, z.T, z.H, z.W, wshape)
		}
		checkRel(t, name+" latent", z.Data, want, tolF32)
		if name != "video_encode" {
			continue
		}
		// one output frame per im2col group: the same math in less scratch
		// (ggml's matmul blocking depends on the column count, so not bit-equal)
		e.ConvBudget = 1
		zg, err := e.EncodeVideo(context.Background(), clipFrom(px, shape))
		e.ConvBudget = 0
		if err != nil {
			t.Fatal(err)
		}
		checkRel(t, "frame-grouped convs vs one group", zg.Data, z.Data, 1e-5)
		checkRel(t, name+" latent (frame-grouped)", zg.Data, want, tolF32)
	}
	a.done()
}

// A clip is encoded only as far as its kept steps need (the encoder is
// causal in time): 36 frames are clips at 0, 17 and 34, 15 steps with 12
// kept, and the last clip's 2 kept steps take its first 5 frames (2 real,
// 3 padding) instead of 17. The latent is the whole clips' encode, cropped.
func TestVideoEncodeSkipsDroppedFrames(t *testing.T) {
	e, a := newTestEncoder(t)
	px, shape := fixtureTensor(t, openFixture(t, "video_encode"), "input.pixels")
	v := clipFrames(clipFrom(px, shape), 0, 36)
	encode := func(e *VideoEncoder) (Latent, []int) {
		var frames []int
		e.inspect = func(g *ggml.Graph) {
			a.inspect(g)
			frames = append(frames, inputFrames(g))
		}
		z, err := e.EncodeVideo(context.Background(), v)
		if err != nil {
			t.Fatal(err)
		}
		return z, frames
	}
	z, frames := encode(e)
	// the reference: no steps dropped, so every clip is encoded whole
	whole, cfg := *e, *e.cfg
	cfg.TokenDrop = 0
	whole.cfg = &cfg
	zw, wholeFrames := encode(&whole)
	if fmt.Sprint(frames) != "[17 17 5]" || fmt.Sprint(wholeFrames) != "[17 17 17]" {
		t.Fatalf("frames encoded per clip: %v, without a drop %v; want [17 17 5] and [17 17 17]", frames, wholeFrames)
	}
	if got, want := frames[0]+frames[1]+frames[2], arch.EncodedFrames(v.T, cfg.ClipLength, cfg.TemporalRatio(), e.cfg.TokenDrop); got != want {
		t.Errorf("%d frames encoded, the planner counts %d", got, want)
	}
	if z.T != 12 || zw.T != 15 {
		t.Fatalf("%d steps, without a drop %d; want 12 and 15", z.T, zw.T)
	}
	per := z.H * z.W
	var want []float32
	for c := range zw.C {
		want = append(want, zw.Data[c*zw.T*per:][:z.T*per]...)
	}
	checkRel(t, "truncated clips vs whole clips", z.Data, want, 1e-5)
	a.done()
}

// inputFrames is the frame count of a graph's "pixels" input.
func inputFrames(g *ggml.Graph) int {
	for _, n := range g.Ops() {
		for _, s := range n.Src {
			if s.Name == "pixels" {
				return int(s.Shape[3])
			}
		}
	}
	return 0
}

func TestVideoDecode(t *testing.T) {
	cases := []struct {
		fixture string
		tile    int // 0: the config's tile (32 px in the tiny model), huge: untiled
	}{
		{"video_decode", 1 << 20},
		{"video_decode_tiled", 0},
		{"video_decode_long", 0},
		{"video_decode_image", 0},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			d, a := newTestDecoder(t, DecodeOptions{Precision: exactKV, TileSize: c.tile})
			fx := openFixture(t, c.fixture)
			var names []string
			if c.fixture == "video_decode" {
				names = []string{"post_quant", "dec.x_embed", "dec.block.0", "dec.block.1", "dec.norm_out"}
			}
			rec := record(names...)
			d.Tap = rec.tap
			zd, zs := fixtureTensor(t, fx, "input.latent")
			clip, err := d.DecodeClip(context.Background(), latentFrom(zd, zs))
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				want, ws := fixtureTensor(t, fx, "tap."+n)
				got := rec.values[n]
				if n == "post_quant" { // ggml [C, N] is [N][C]; the reference is [C][N]
					got = transpose(got, int(ws[1]), len(got)/int(ws[1]))
				}
				checkRel(t, n, got, want, tolF32)
			}
			want, ws := fixtureTensor(t, fx, "output.pixels")
			if clip.T != int(ws[2]) || clip.H != int(ws[3]) || clip.W != int(ws[4]) {
				t.Fatalf("decoded %dx%dx%d, want %v", clip.T, clip.H, clip.W, ws)
			}
			checkRel(t, c.fixture+" pixels", clip.Data, want, tolF32)
			t.Logf("%d decoder calls", d.Calls)
			a.done()
		})
	}
}

// transpose turns [n][c] into [c][n].
func transpose(v []float32, c, n int) []float32 {
	out := make([]float32, len(v))
	for i := range n {
		for j := range c {
			out[j*n+i] = v[i*c+j]
		}
	}
	return out
}

// Decoder matmul weights kept in f16 (half the memory) against the f32 reference.
func TestVideoDecodeF16Weights(t *testing.T) {
	d, a := newTestDecoder(t, DecodeOptions{Precision: ggml.Precision{Weights: ggml.StoreAs(ggml.F16)}})
	fx := openFixture(t, "video_decode_tiled")
	zd, zs := fixtureTensor(t, fx, "input.latent")
	clip, err := d.DecodeClip(context.Background(), latentFrom(zd, zs))
	if err != nil {
		t.Fatal(err)
	}
	want, _ := fixtureTensor(t, fx, "output.pixels")
	checkRel(t, "pixels, f16 weights, fast attention", clip.Data, want, tolF16)
	f32 := loadTestDecoder(t, DecodeOptions{})
	t.Logf("decoder weights: %d bytes in f16, %d in f32", d.WeightBytes(), f32.WeightBytes())
	if 10*d.WeightBytes() > 6*f32.WeightBytes() {
		t.Errorf("f16 weights take %d bytes, f32 %d: want close to half", d.WeightBytes(), f32.WeightBytes())
	}
	a.done()
}

// Cancelling stops the decode at the next graph with the context's error.
func TestVideoDecodeCancel(t *testing.T) {
	d := loadTestDecoder(t, DecodeOptions{})
	zd, zs := fixtureTensor(t, openFixture(t, "video_decode_long"), "input.latent")
	ctx, cancel := context.WithCancel(context.Background())
	frames := 0
	err := d.Decode(ctx, latentFrom(zd, zs), func(int, []float32) error {
		frames++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) || frames == 0 || frames >= d.Frames(int(zs[2])) || d.Calls != 1 {
		t.Errorf("cancelled decode: err %v after %d frames and %d calls; want context.Canceled after the first chunk", err, frames, d.Calls)
	}
}

// A NaN latent (a diverged sampler) still gives finite frames in [0, 1].
func TestVideoDecodeNaNLatent(t *testing.T) {
	var logged bytes.Buffer
	d := loadTestDecoder(t, DecodeOptions{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	z := Latent{C: 24, T: 1, H: 2, W: 2, Data: make([]float32, 24*4)}
	for i := range z.Data {
		z.Data[i] = float32(math.NaN())
	}
	c, err := d.DecodeClip(context.Background(), z)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range c.Data {
		if !(v >= 0 && v <= 1) {
			t.Fatalf("pixel %d = %v", i, v)
		}
	}
	if !strings.Contains(logged.String(), "NaN pixels") || !strings.Contains(logged.String(), "pixels=3072") {
		t.Errorf("no warning for the NaN frame; log: %q", logged.String())
	}
}
