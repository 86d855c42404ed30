package sampler

import (
	"fmt"
	"image"
	"image/color"
	"math"
)

// PreviewImage is the per-step preview when no fitted map is at hand
// (engine/preview holds the one fitted to the VAE): one latent frame of a
// video latent [c, t, h, w] shown in false colour, latent channels 0, 1
// and 2 as red, green and blue, each stretched over its own 1st..99th
// percentile in that frame. It costs one pass over h·w·3 values and needs no
// VAE; it shows where structure is forming, not the decoded colours.
func PreviewImage(lat []float32, c, t, h, w, frame int) (*image.RGBA, error) {
	if c < 3 || t < 1 || h < 1 || w < 1 || len(lat) != c*t*h*w {
		return nil, fmt.Errorf("sampler: preview of %d values as [%d, %d, %d, %d] (need 3+ channels)", len(lat), c, t, h, w)
	}
	if frame < 0 || frame >= t {
		return nil, fmt.Errorf("sampler: preview frame %d of %d", frame, t)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	var ch [3][]float32
	for k := range ch {
		off := (k*t + frame) * h * w
		ch[k] = lat[off : off+h*w]
	}
	var lo, hi [3]float32
	for k := range ch {
		lo[k], hi[k] = percentiles(ch[k])
	}
	for i := 0; i < h*w; i++ {
		var px [3]uint8
		for k := range ch {
			v := float64((ch[k][i] - lo[k]) / (hi[k] - lo[k]))
			px[k] = uint8(math.Round(255 * math.Min(1, math.Max(0, v))))
		}
		img.SetRGBA(i%w, i/w, color.RGBA{px[0], px[1], px[2], 255})
	}
	return img, nil
}

// percentiles returns about the 1st and 99th percentile by a 64-bin
// histogram (robust to outliers, linear in n); never an empty range.
func percentiles(v []float32) (float32, float32) {
	mn, mx := v[0], v[0]
	for _, x := range v {
		mn, mx = min(mn, x), max(mx, x)
	}
	if mx-mn < 1e-12 {
		return mn - 0.5, mn + 0.5
	}
	const bins = 64
	var hist [bins]int
	scale := float32(bins) / (mx - mn)
	for _, x := range v {
		hist[min(bins-1, int((x-mn)*scale))]++
	}
	cut := len(v) / 100
	lo, hi := 0, bins-1
	for n := 0; lo < bins-1 && n+hist[lo] <= cut; lo++ {
		n += hist[lo]
	}
	for n := 0; hi > lo && n+hist[hi] <= cut; hi-- {
		n += hist[hi]
	}
	return mn + float32(lo)/scale, mn + float32(hi+1)/scale
}
