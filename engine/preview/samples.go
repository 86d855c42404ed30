package preview

import "fmt"

// The fit's latents are still scenes: a smooth random field per channel,
// the same in every latent step. Smooth, because the decoder's attention
// mixes neighbouring cells and a field of independent cells is nothing
// like a picture; still, because then every decoded frame of a cell
// belongs to that one latent vector, whatever the decoder's temporal
// layout (clips, padding, dropped steps) does with the frames.

// StaticField is such a latent [c][t][h][w]: coarse x coarse values per
// channel from noise (len c·coarse², standard normal, as the normalised
// latents are), bilinearly stretched over h x w cells and repeated in
// every step.
func StaticField(noise []float32, c, t, h, w, coarse int) ([]float32, error) {
	if coarse < 2 || c < 1 || t < 1 || h < 1 || w < 1 || len(noise) != c*coarse*coarse {
		return nil, fmt.Errorf("preview: field of %d values for %d channels on a %d-point grid", len(noise), c, coarse)
	}
	out := make([]float32, c*t*h*w)
	for ch := range c {
		grid := noise[ch*coarse*coarse : (ch+1)*coarse*coarse]
		plane := out[ch*t*h*w : ch*t*h*w+h*w]
		for y := range h {
			gy, fy := gridPos(y, h, coarse)
			for x := range w {
				gx, fx := gridPos(x, w, coarse)
				top := lerp(grid[gy*coarse+gx], grid[gy*coarse+gx+1], fx)
				bottom := lerp(grid[(gy+1)*coarse+gx], grid[(gy+1)*coarse+gx+1], fx)
				plane[y*w+x] = lerp(top, bottom, fy)
			}
		}
		for s := 1; s < t; s++ {
			copy(out[(ch*t+s)*h*w:][:h*w], plane)
		}
	}
	return out, nil
}

// gridPos places cell i of n on a grid of g points (corners aligned): the
// grid cell to its left and the fraction past it.
func gridPos(i, n, g int) (int, float32) {
	if n == 1 {
		return 0, 0
	}
	p := float32(i) * float32(g-1) / float32(n-1)
	k := min(int(p), g-2)
	return k, p - float32(k)
}

func lerp(a, b, f float32) float32 { return a + (b-a)*f }

// AddStatic adds every cell of a still latent lat [c][t][h][w] (step 0
// is read) with the mean colour the decoder gave its ratio x ratio pixels
// over all frames of clip ([3][frames][h·ratio][w·ratio], in [0, 1]).
func (f *Fitter) AddStatic(lat []float32, c, t, h, w int, clip []float32, frames, ratio int) error {
	ph, pw := h*ratio, w*ratio
	if c != f.c || len(lat) != c*t*h*w || frames < 1 || len(clip) != 3*frames*ph*pw {
		return fmt.Errorf("preview: %d decoded values for %d frames of a %dx%d latent at ratio %d", len(clip), frames, h, w, ratio)
	}
	x := make([]float32, c)
	scale := 1 / float64(frames*ratio*ratio)
	for cy := range h {
		for cx := range w {
			for ch := range c {
				x[ch] = lat[ch*t*h*w+cy*w+cx]
			}
			var rgb [3]float64
			for k := range rgb {
				var sum float64
				for fr := range frames {
					base := (k*frames + fr) * ph * pw
					for py := cy * ratio; py < (cy+1)*ratio; py++ {
						for _, v := range clip[base+py*pw+cx*ratio:][:ratio] {
							sum += float64(v)
						}
					}
				}
				rgb[k] = sum * scale
			}
			f.Add(x, rgb)
		}
	}
	return nil
}
