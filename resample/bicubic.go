package resample

import (
	"fmt"
	"math"
)

// Planes is a float32 image in channel-first layout (C x H x W, row-major
// within a plane), the layout torch tensors of shape (C, H, W) have.
type Planes struct {
	Channels, Height, Width int
	Pix                     []float32
}

// atenTaps are the float32 weights of one ATen antialiased pass: output i
// reads count[i] samples from first[i] with weights w[i*ksize:].
type atenTaps struct {
	first, count []int
	w            []float32
	ksize        int
}

// atenCubic is ATen's HelperInterpCubic::aa_filter<float> with the Keys
// constant a = -0.5 used when antialias is on (cubic_convolution1 and 2 of
// UpSample.h), in float32 with each multiply-add fused: that is how
// PyTorch's AVX2/AVX512 builds compile it, and it reproduces torch 2.11's
// weights bit for bit (torch 1.13 evaluated it differently, a few ulps off).
// Explicit fma32 calls make the result the same on every GOARCH.
func atenCubic(x float32) float32 {
	const a = float32(-0.5)
	if x < 0 {
		x = -x
	}
	if x < 1 {
		t := fma32(a+2, x, -(a + 3))
		return fma32(float32(t*x), x, 1)
	}
	if x < 2 {
		t := fma32(a, x, -5*a)
		t = fma32(t, x, 8*a)
		return fma32(t, x, -4*a)
	}
	return 0
}

// fma32 is a float32 fused multiply-add: the float32 product is exact in
// float64, so one float64 FMA and a rounding to float32 give the fused
// result (barring a double-rounding tie, which is vanishingly rare).
func fma32(a, b, c float32) float32 {
	return float32(math.FMA(float64(a), float64(b), float64(c)))
}

// atenAATaps reproduces ATen's _compute_index_ranges_weights with
// antialias=True for float input (HelperBase::
// _compute_indices_min_size_weights_aa): scale is float32(in)/out, the
// support is 2*max(scale,1), centres, inverse scale and weights are float32
// with the mixed float/double steps of the C++ expressions, the bounds use
// Pillow's truncate-after-+0.5 rule, and weights are divided by their
// float32 sum.
func atenAATaps(inSize, outSize int) atenTaps {
	scale := float32(inSize) / float32(outSize)
	support := float32(2.0)
	invscale := float32(1.0)
	if scale >= 1 {
		support = float32(2.0 * float64(scale))
		invscale = float32(1.0 / float64(scale))
	}
	ksize := int(math.Ceil(float64(support)))*2 + 1
	t := atenTaps{first: make([]int, outSize), count: make([]int, outSize), w: make([]float32, outSize*ksize), ksize: ksize}
	for i := range outSize {
		center := float32(float64(scale) * (float64(i) + 0.5))
		xmin := max(int(float64(center-support)+0.5), 0)
		xsize := min(int(float64(center+support)+0.5), inSize) - xmin
		// ATen clips the count: rounding can make it one more than ksize.
		xsize = min(max(xsize, 0), ksize)
		w := t.w[i*ksize : i*ksize+xsize]
		var total float32
		for j := range w {
			arg := (float64(float32(j+xmin)-center) + 0.5) * float64(invscale)
			w[j] = atenCubic(float32(arg))
			total += w[j]
		}
		if total != 0 {
			for j := range w {
				w[j] /= total
			}
		}
		t.first[i], t.count[i] = xmin, xsize
	}
	return t
}

// atenAxis runs one ATen separable AA pass along x (horizontal) or y:
// out = s0*w0, then out += sj*wj left to right in float32, as
// interpolate_aa_single_dim does for float tensors. The compiled loop
// rounds in a particular way we reproduce: the += terms go in groups of
// four, rounded after each multiply and each add, and the leftover terms
// ((n-1) mod 4 of them) are fused multiply-adds, the signature of an
// unrolled-by-4 loop whose remainder the compiler contracted. Measured, not
// read from the binary: with exactly this rule every float of the torch
// 2.11 references (AVX512 build) matches bit for bit, and all-fused or
// all-unfused sums miss up to a quarter of them.
func atenAxis(src Planes, t atenTaps, horizontal bool) Planes {
	out := Planes{Channels: src.Channels, Height: src.Height, Width: src.Width}
	if horizontal {
		out.Width = len(t.first)
	} else {
		out.Height = len(t.first)
	}
	out.Pix = make([]float32, out.Channels*out.Height*out.Width)
	step := 1 // distance between consecutive taps in the source
	if !horizontal {
		step = src.Width
	}
	for c := range out.Channels {
		sp := src.Pix[c*src.Height*src.Width:]
		op := out.Pix[c*out.Height*out.Width:]
		for y := range out.Height {
			for x := range out.Width {
				var i, base int
				if horizontal {
					i, base = x, y*src.Width+t.first[x]
				} else {
					i, base = y, t.first[y]*src.Width+x
				}
				w := t.w[i*t.ksize : i*t.ksize+t.count[i]]
				acc := float32(sp[base] * w[0])
				body := 1 + (len(w)-1)/4*4
				for j := 1; j < body; j++ {
					acc += float32(sp[base+j*step] * w[j])
				}
				for j := body; j < len(w); j++ {
					acc = fma32(sp[base+j*step], w[j], acc)
				}
				op[y*out.Width+x] = acc
			}
		}
	}
	return out
}

// BicubicAA resizes float32 planes to w x h as
// torch.nn.functional.interpolate(x[None], size=(h, w), mode="bicubic",
// antialias=True, align_corners=False) does on the CPU (ATen's
// separable_upsample_generic_Nd_kernel_impl with HelperInterpCubic): width
// first, then height, each pass skipped when its size is unchanged, float32
// weights and float32 sums, the intermediate kept in float32. Values are
// not clamped (bicubic lobes overshoot), as in torch. Bit-exact against
// torch 2.11 on x86 (its CUDA kernel and torch 1.13 differ in the last
// bits; on a CUDA tensor HF's processors take that path).
func BicubicAA(src Planes, w, h int) (Planes, error) {
	if src.Channels <= 0 || src.Width <= 0 || src.Height <= 0 || len(src.Pix) != src.Channels*src.Height*src.Width {
		return Planes{}, fmt.Errorf("resample: bicubic: bad %dx%dx%d planes with %d values", src.Channels, src.Height, src.Width, len(src.Pix))
	}
	if w <= 0 || h <= 0 {
		return Planes{}, fmt.Errorf("resample: bicubic to %dx%d: size must be positive", w, h)
	}
	out := src
	if w != src.Width {
		out = atenAxis(out, atenAATaps(src.Width, w), true)
	}
	if h != src.Height {
		out = atenAxis(out, atenAATaps(src.Height, h), false)
	}
	if w == src.Width && h == src.Height {
		out.Pix = append([]float32(nil), src.Pix...)
	}
	return out, nil
}

// PlanesFromRGB converts packed 8-bit RGB to 3 float32 planes holding 0..255,
// what HF's fast processors feed interpolate (uint8 CHW tensor .float()).
func PlanesFromRGB(p RGB) Planes {
	n := p.Width * p.Height
	out := Planes{Channels: 3, Height: p.Height, Width: p.Width, Pix: make([]float32, 3*n)}
	for i := range n {
		out.Pix[i] = float32(p.Pix[3*i])
		out.Pix[n+i] = float32(p.Pix[3*i+1])
		out.Pix[2*n+i] = float32(p.Pix[3*i+2])
	}
	return out
}

// RGBFromPlanes converts 3 float planes back to packed 8-bit RGB the way the
// HF fast processors do after interpolate: round_() (half to even) then
// clamp_(0, 255), then uint8.
func RGBFromPlanes(p Planes) (RGB, error) {
	if p.Channels != 3 || len(p.Pix) != 3*p.Width*p.Height {
		return RGB{}, fmt.Errorf("resample: rgb from %d planes of %dx%d with %d values", p.Channels, p.Width, p.Height, len(p.Pix))
	}
	n := p.Width * p.Height
	out := NewRGB(p.Width, p.Height)
	for c := range 3 {
		for i, v := range p.Pix[c*n : (c+1)*n] {
			r := math.RoundToEven(float64(v))
			out.Pix[3*i+c] = byte(min(max(r, 0), 255))
		}
	}
	return out, nil
}

// BicubicAARGB is the whole HF fast-processor resize of an 8-bit RGB
// picture: uint8 -> float32 -> BicubicAA -> round half to even -> clamp to
// 0..255 -> uint8.
func BicubicAARGB(src RGB, w, h int) (RGB, error) {
	if err := src.check("bicubic"); err != nil {
		return RGB{}, err
	}
	planes, err := BicubicAA(PlanesFromRGB(src), w, h)
	if err != nil {
		return RGB{}, err
	}
	return RGBFromPlanes(planes)
}
