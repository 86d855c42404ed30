package textenc

import (
	"fmt"

	"h3studio/engine/layout"
)

// Host-side preparation of a vision item (an image, or one 2-frame video
// block): patch extraction, position-embedding interpolation and the 2-D
// rotary positions. All lists are in merge order: the patches of each
// SpatialMerge x SpatialMerge cell are consecutive, cells in raster order,
// which is the order the Qwen processors emit and the mergers rely on.

// Item is one vision block as the tower sees it: Frames of C x H x W
// float32 in [0, 1], H and W multiples of Patch*SpatialMerge. A block is
// TemporalPatch frames (an image repeats its frame); with Pool.Temporal > 1
// it holds up to that many consecutive blocks' frames, whose tokens are
// averaged, and Pool.Spatial > 1 averages each square of merged tokens.
type Item struct {
	Frames [][]float32
	Height int
	Width  int
	Pool   layout.Pool
}

// pool returns the item's pooling with zero factors read as 1.
func (it Item) pool() (temporal, spatial int) {
	return max(1, it.Pool.Temporal), max(1, it.Pool.Spatial)
}

// visionTokens is the number of language-model tokens the item yields.
func visionTokens(c VisionConfig, it Item) int {
	gh, gw := c.Grid(it.Height, it.Width)
	_, sp := it.pool()
	mh, mw := gh/c.SpatialMerge, gw/c.SpatialMerge
	return ((mh + sp - 1) / sp) * ((mw + sp - 1) / sp)
}

// checkItem validates an item's geometry in one sentence.
func checkItem(c VisionConfig, it Item) error {
	cell := c.Patch * c.SpatialMerge
	if it.Height <= 0 || it.Width <= 0 || it.Height%cell != 0 || it.Width%cell != 0 {
		return fmt.Errorf("textenc: vision item %dx%d: sides must be positive multiples of %d", it.Width, it.Height, cell)
	}
	tp, sp := it.pool()
	if n := len(it.Frames); n == 0 || n%c.TemporalPatch != 0 || n > tp*c.TemporalPatch {
		return fmt.Errorf("textenc: vision item has %d frames, want a multiple of %d up to %d (repeat an image's frame)", n, c.TemporalPatch, tp*c.TemporalPatch)
	}
	if tp > 2 || sp > 2 {
		return fmt.Errorf("textenc: pooling %dx temporal, %dx spatial: only 1 or 2 are supported", tp, sp)
	}
	for i, f := range it.Frames {
		if len(f) != c.InChannels*it.Height*it.Width {
			return fmt.Errorf("textenc: vision item frame %d has %d values, want %d x %d x %d", i, len(f), c.InChannels, it.Height, it.Width)
		}
	}
	return nil
}

// patchify cuts an item's first block into patch rows of C*T*P*P values (channel, then
// time, then y, x: the Conv3d weight's layout), normalising pixels to
// x*2-1 (the processor's mean 0.5, std 0.5). Rows are in merge order.
func patchify(c VisionConfig, it Item) []float32 {
	P, T, C, m := c.Patch, c.TemporalPatch, c.InChannels, c.SpatialMerge
	gh, gw := c.Grid(it.Height, it.Width)
	row := C * T * P * P
	out := make([]float32, 0, gh*gw*row)
	for by := 0; by < gh/m; by++ {
		for bx := 0; bx < gw/m; bx++ {
			for my := 0; my < m; my++ {
				for mx := 0; mx < m; mx++ {
					y0, x0 := (by*m+my)*P, (bx*m+mx)*P
					for ch := 0; ch < C; ch++ {
						for t := 0; t < T; t++ {
							f := it.Frames[t][ch*it.Height*it.Width:]
							for y := 0; y < P; y++ {
								for x := 0; x < P; x++ {
									out = append(out, f[(y0+y)*it.Width+x0+x]*2-1)
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// mergeOrder lists raster patch indices (y*gw+x) in merge order.
func mergeOrder(gh, gw, m int) []int {
	out := make([]int, 0, gh*gw)
	for by := 0; by < gh/m; by++ {
		for bx := 0; bx < gw/m; bx++ {
			for my := 0; my < m; my++ {
				for mx := 0; mx < m; mx++ {
					out = append(out, (by*m+my)*gw+bx*m+mx)
				}
			}
		}
	}
	return out
}

// linspace32 is torch.linspace in float32: the first half steps up from
// start, the second half steps down from end, so end is exact.
func linspace32(start, end float32, n int) []float32 {
	out := make([]float32, n)
	if n == 1 {
		out[0] = start
		return out
	}
	step := (end - start) / float32(n-1)
	half := n / 2
	for i := 0; i < n; i++ {
		if i < half {
			out[i] = start + step*float32(i)
		} else {
			out[i] = end - step*float32(n-1-i)
		}
	}
	return out
}

// posEmbedInterp gives, per patch in merge order, the four corner rows of
// the side x side learned position table and their bilinear weights:
// corner-aligned sampling (grid point i maps to i*(side-1)/(g-1)), as
// Qwen3-VL's fast_pos_embed_interpolate.
func posEmbedInterp(gh, gw, merge, side int) (idx [4][]int32, wts [4][]float32) {
	hs := linspace32(0, float32(side-1), gh)
	ws := linspace32(0, float32(side-1), gw)
	order := mergeOrder(gh, gw, merge)
	for c := range idx {
		idx[c] = make([]int32, len(order))
		wts[c] = make([]float32, len(order))
	}
	for n, r := range order {
		y, x := hs[r/gw], ws[r%gw]
		fy, fx := int32(y), int32(x)
		cy, cx := min(fy+1, int32(side-1)), min(fx+1, int32(side-1))
		dy, dx := y-float32(fy), x-float32(fx)
		s := int32(side)
		idx[0][n], wts[0][n] = fy*s+fx, (1-dy)*(1-dx)
		idx[1][n], wts[1][n] = fy*s+cx, (1-dy)*dx
		idx[2][n], wts[2][n] = cy*s+fx, dy*(1-dx)
		idx[3][n], wts[3][n] = cy*s+cx, dy*dx
	}
	return idx, wts
}

// visionRoPEPositions gives each patch's (row, col) in merge order.
func visionRoPEPositions(gh, gw, merge int) (rows, cols []int32) {
	order := mergeOrder(gh, gw, merge)
	rows, cols = make([]int32, len(order)), make([]int32, len(order))
	for n, r := range order {
		rows[n], cols[n] = int32(r/gw), int32(r%gw)
	}
	return rows, cols
}

// poolTokens averages a merged token grid mh x mw (row-major, width d per
// token) over sp x sp squares, partial squares at the edges averaging the
// tokens they hold.
func poolTokens(x []float32, mh, mw, d, sp int) []float32 {
	if sp <= 1 {
		return x
	}
	ph, pw := (mh+sp-1)/sp, (mw+sp-1)/sp
	out := make([]float32, ph*pw*d)
	acc := make([]float64, d)
	for py := 0; py < ph; py++ {
		for px := 0; px < pw; px++ {
			clear(acc)
			n := 0
			for y := py * sp; y < min(mh, (py+1)*sp); y++ {
				for x0 := px * sp; x0 < min(mw, (px+1)*sp); x0++ {
					for i, v := range x[(y*mw+x0)*d : (y*mw+x0+1)*d] {
						acc[i] += float64(v)
					}
					n++
				}
			}
			for i := range acc {
				out[(py*pw+px)*d+i] = float32(acc[i] / float64(n))
			}
		}
	}
	return out
}
