package vae

import "fmt"

// Latent is a video latent [C][T][H][W] (row-major, batch dropped).
type Latent struct {
	C, T, H, W int
	Data       []float32
}

// Clip is RGB video [3][T][H][W]: values in [-1, 1] going into the encoder,
// in [0, 1] coming out of the decoder.
type Clip struct {
	T, H, W int
	Data    []float32
}

// vol is a host tensor [c][t][h][w] used while chunks and tiles are stitched.
type vol struct {
	c, t, h, w int
	d          []float32
}

func newVol(c, t, h, w int) vol { return vol{c, t, h, w, make([]float32, c*t*h*w)} }

func (v vol) idx(c, t, y, x int) int { return ((c*v.t+t)*v.h+y)*v.w + x }

// crop copies the box [t0,t1) x [y0,y1) x [x0,x1) of every channel.
func (v vol) crop(t0, t1, y0, y1, x0, x1 int) vol {
	if t0 < 0 || t1 > v.t || y0 < 0 || y1 > v.h || x0 < 0 || x1 > v.w || t0 > t1 || y0 > y1 || x0 > x1 {
		panic(fmt.Sprintf("vae: crop [%d:%d, %d:%d, %d:%d] of %dx%dx%d", t0, t1, y0, y1, x0, x1, v.t, v.h, v.w))
	}
	out := newVol(v.c, t1-t0, y1-y0, x1-x0)
	for c := range v.c {
		for t := t0; t < t1; t++ {
			for y := y0; y < y1; y++ {
				src := v.idx(c, t, y, x0)
				copy(out.d[out.idx(c, t-t0, y-y0, 0):][:out.w], v.d[src:src+out.w])
			}
		}
	}
	return out
}

// paste writes src into v at (t0, y0, x0).
func (v vol) paste(src vol, t0, y0, x0 int) {
	for c := range src.c {
		for t := range src.t {
			for y := range src.h {
				copy(v.d[v.idx(c, t0+t, y0+y, x0):][:src.w], src.d[src.idx(c, t, y, 0):][:src.w])
			}
		}
	}
}

// axis names for blend
const (
	axisT = 1
	axisH = 2
	axisW = 3
)

func (v vol) dim(axis int) int { return [4]int{v.c, v.t, v.h, v.w}[axis] }

// blend returns a copy of b whose first e positions along axis are
// a[last e]·(1-w) + b[first e]·w with w ramping from 0 (e is clipped to
// both lengths), as the reference's blend.
func blend(a, b vol, e, axis int) vol {
	e = min(e, a.dim(axis), b.dim(axis))
	out := vol{b.c, b.t, b.h, b.w, append([]float32(nil), b.d...)}
	if e <= 0 {
		return out
	}
	off := a.dim(axis) - e
	for c := range b.c {
		for t := range b.t {
			for y := range b.h {
				for x := range b.w {
					p := [4]int{c, t, y, x}[axis]
					if p >= e {
						continue
					}
					at := [4]int{c, t, y, x}
					at[axis] += off
					w := blendWeight(p, e)
					i := out.idx(c, t, y, x)
					out.d[i] = a.d[a.idx(at[0], at[1], at[2], at[3])]*(1-w) + b.d[i]*w
				}
			}
		}
	}
	return out
}
