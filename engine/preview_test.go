package engine

import (
	"context"
	"image"
	"math"
	"testing"

	"h3studio/engine/plan"
	"h3studio/engine/sampler"
)

// TestStepPreviewThroughFittedMap fits the tiny model's preview map with
// its real VAE decoder, renders with it, and compares the last step's
// preview with the clip the decoder then wrote: cell by cell, the fitted
// map is closer (PSNR) to the real decode than the false-colour view of
// the same latent.
func TestStepPreviewThroughFittedMap(t *testing.T) {
	e := openTiny(t)
	p := tinyPlan(t, e, plan.Request{Prompt: "a red fox", Steps: 2})
	m, err := e.FitPreview(context.Background(), p.Partition)
	if err != nil {
		t.Fatal(err)
	}
	var final []float32
	var frames [][]float32
	e.tap = func(name string, _ int, v any) {
		switch name {
		case "final.video":
			final = append([]float32(nil), v.([]float32)...)
		case "decode.frame":
			frames = append(frames, append([]float32(nil), v.([]float32)...))
		}
	}
	defer func() { e.tap = nil }()
	var last image.Image
	_, err = e.Generate(context.Background(), Request{Seed: 3, Preview: true, PreviewMap: m, Output: &recorder{}}, p,
		func(ev Event) {
			if ev.Preview != nil {
				last = ev.Preview
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	c, lt, lh, lw := m.Channels, p.Layout.LatentFrames, p.Canvas.LatentH(), p.Canvas.LatentW()
	frame := lt / previewFrameOf
	want := cellMeans(frames, frame, lt, lh, lw, p.Canvas.Width/lw)
	falseColour, err := sampler.PreviewImage(final, c, lt, lh, lw, frame)
	if err != nil {
		t.Fatal(err)
	}
	fitted, old := psnr(last, want), psnr(falseColour, want)
	t.Logf("step preview vs decoded clip: fitted map %.1f dB, false colour %.1f dB (%d fit channels)", fitted, old, c)
	if !(fitted > old+3) {
		t.Fatalf("the fitted preview (%.1f dB) is not clearly closer to the decode than false colour (%.1f dB)", fitted, old)
	}
}

// cellMeans is the decoded clip at latent resolution around latent step
// j of lt: the mean of each cell's ratio² pixels over the frames that
// fall in the step's share of the clip ([3][h][w] in [0, 1]).
func cellMeans(frames [][]float32, j, lt, h, w, ratio int) []float64 {
	n := len(frames)
	lo, hi := j*n/lt, max(j*n/lt+1, (j+1)*n/lt)
	out := make([]float64, 3*h*w)
	pw, ph := w*ratio, h*ratio
	for _, f := range frames[lo:hi] {
		for k := range 3 {
			for y := range ph {
				for x := range pw {
					out[(k*h+y/ratio)*w+x/ratio] += float64(f[(k*ph+y)*pw+x])
				}
			}
		}
	}
	for i := range out {
		out[i] /= float64((hi - lo) * ratio * ratio)
	}
	return out
}

// psnr of an 8-bit picture against colours in [0, 1] ([3][h][w]).
func psnr(img image.Image, want []float64) float64 {
	b := img.Bounds()
	n := b.Dx() * b.Dy()
	var se float64
	for y := range b.Dy() {
		for x := range b.Dx() {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			for k, v := range []uint32{r, g, bl} {
				d := float64(v)/0xffff - want[k*n+y*b.Dx()+x]
				se += d * d
			}
		}
	}
	return 10 * math.Log10(1/math.Max(se/float64(3*n), 1e-12))
}
