package textenc

import "fmt"

// Host-side preparation of a vision item (an image, or one 2-frame video
// block): patch extraction, position-embedding interpolation and the 2-D
// rotary positions. All lists are in merge order: the patches of each
// SpatialMerge x SpatialMerge cell are consecutive, cells in raster order,
// which is the order the Qwen processors emit and the mergers rely on.

// Item is one vision block as the tower sees it: Frames (TemporalPatch of
// them; an image repeats its frame) of C x H x W float32 in [0, 1], H and
// W multiples of Patch*SpatialMerge.
type Item struct {
	Frames [][]float32
	Height int
	Width  int
}

// Grid returns the patch grid of an item.
func (c VisionConfig) Grid(it Item) (gh, gw int) { return it.Height / c.Patch, it.Width / c.Patch }

// checkItem validates an item's geometry in one sentence.
func (c VisionConfig) checkItem(it Item) error {
	cell := c.Patch * c.SpatialMerge
	if it.Height <= 0 || it.Width <= 0 || it.Height%cell != 0 || it.Width%cell != 0 {
		return fmt.Errorf("textenc: vision item %dx%d: sides must be positive multiples of %d", it.Width, it.Height, cell)
	}
	if len(it.Frames) != c.TemporalPatch {
		return fmt.Errorf("textenc: vision item has %d frames, want %d (repeat an image's frame)", len(it.Frames), c.TemporalPatch)
	}
	for i, f := range it.Frames {
		if len(f) != c.InChannels*it.Height*it.Width {
			return fmt.Errorf("textenc: vision item frame %d has %d values, want %d x %d x %d", i, len(f), c.InChannels, it.Height, it.Width)
		}
	}
	return nil
}

// Patchify cuts an item into patch rows of C*T*P*P values (channel, then
// time, then y, x: the Conv3d weight's layout), normalising pixels to
// x*2-1 (the processor's mean 0.5, std 0.5). Rows are in merge order.
func (c VisionConfig) Patchify(it Item) []float32 {
	P, T, C, m := c.Patch, c.TemporalPatch, c.InChannels, c.SpatialMerge
	gh, gw := c.Grid(it)
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
