// Package preview turns a denoise step's video latent into a colour
// picture for the step preview: a linear map from the latent channels at
// each latent cell to RGB, plus a bias, fitted by least squares to what
// the snapshot's own VAE decoder makes of latents (engine.FitPreview runs
// the decoder; app caches the map per VAE). The picture is at latent
// resolution, one pixel per latent cell, and the window upscales it.
//
// Latents are [C][T][H][W] float32, normalised as the DiT sees them (the
// VAE's latents_mean and latents_std removed); colours are in [0, 1].
package preview

import (
	"fmt"
	"image"
	"image/color"
	"math"
)

// Map is a fitted latent-to-RGB map.
type Map struct {
	// Channels is the latent's channel count.
	Channels int `json:"channels"`
	// RGB holds, per colour, Channels weights followed by the bias.
	RGB [3][]float64 `json:"rgb"`
}

// Validate reports a map whose rows do not match its channel count (a
// damaged or foreign cache file).
func (m *Map) Validate() error {
	if m.Channels < 1 {
		return fmt.Errorf("preview: map of %d channels", m.Channels)
	}
	for k, row := range m.RGB {
		if len(row) != m.Channels+1 {
			return fmt.Errorf("preview: colour %d has %d coefficients, want %d", k, len(row), m.Channels+1)
		}
		for _, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("preview: colour %d has a non-finite coefficient", k)
			}
		}
	}
	return nil
}

// Colour is the map's RGB for one latent cell's channel vector x
// (len Channels), not clamped.
func (m *Map) Colour(x []float32) [3]float64 {
	var out [3]float64
	for k, row := range m.RGB {
		v := row[m.Channels]
		for c, xc := range x {
			v += row[c] * float64(xc)
		}
		out[k] = v
	}
	return out
}

// Image is latent frame `frame` of lat [c, t, h, w] through the map: a
// w x h picture, colours clamped to [0, 1] and rounded to 8 bits.
func (m *Map) Image(lat []float32, c, t, h, w, frame int) (*image.RGBA, error) {
	if c != m.Channels || t < 1 || h < 1 || w < 1 || len(lat) != c*t*h*w {
		return nil, fmt.Errorf("preview: %d values as [%d, %d, %d, %d] through a %d-channel map", len(lat), c, t, h, w, m.Channels)
	}
	if frame < 0 || frame >= t {
		return nil, fmt.Errorf("preview: frame %d of %d", frame, t)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	x := make([]float32, c)
	for i := range h * w {
		for ch := range c {
			x[ch] = lat[(ch*t+frame)*h*w+i]
		}
		rgb := m.Colour(x)
		img.SetRGBA(i%w, i/w, color.RGBA{quantise(rgb[0]), quantise(rgb[1]), quantise(rgb[2]), 255})
	}
	return img, nil
}

// quantise maps [0, 1] to 0..255, rounding to nearest; NaN is 0.
func quantise(v float64) uint8 {
	x := v*255 + 0.5
	switch {
	case !(x > 0):
		return 0
	case x >= 255:
		return 255
	}
	return uint8(x)
}
