package resample

import (
	"fmt"
	"math"
)

// atenCubic64 is ATen's HelperInterpCubic::aa_filter<double, true> (Keys,
// a = -0.5) as the uint8 path evaluates it: in float64 with fused
// multiply-adds, the form PyTorch's AVX2/AVX512 builds compile it to (the
// float32 twin, atenCubic, matches torch 2.11's weights bit for bit that
// way).
func atenCubic64(x float64) float64 {
	const a = -0.5
	x = math.Abs(x)
	if x < 1 {
		t := math.FMA(a+2, x, -(a + 3))
		return math.FMA(t*x, x, 1)
	}
	if x < 2 {
		t := math.FMA(a, x, -5*a)
		t = math.FMA(t, x, 8*a)
		return math.FMA(t, x, -4*a)
	}
	return 0
}

// atenInt16Taps reproduces ATen's _compute_index_ranges_int16_weights for
// bicubic with antialias: float64 weights with the same bounds rule as the
// float path (scale in/out, support 2*max(scale,1), centre (i+0.5)*scale),
// normalized by their sum; then the largest precision p < 22 with
// round(max weight * 2^(p+1)) < 2^15, and each weight rounded half away
// from zero to an int16 of scale 2^p.
func atenInt16Taps(inSize, outSize int) fixedTaps {
	scale := float64(inSize) / float64(outSize)
	support, invscale := 2.0, 1.0
	if scale >= 1 {
		support, invscale = 2.0*scale, 1.0/scale
	}
	ksize := int(math.Ceil(support))*2 + 1
	t := fixedTaps{first: make([]int, outSize), count: make([]int, outSize), k: make([]int32, outSize*ksize), ksize: ksize}
	w := make([]float64, outSize*ksize)
	var wmax float64
	for i := range outSize {
		center := scale * (float64(i) + 0.5)
		xmin := max(int(center-support+0.5), 0)
		xsize := min(max(min(int(center+support+0.5), inSize)-xmin, 0), ksize)
		wi := w[i*ksize : i*ksize+xsize]
		var total float64
		for j := range wi {
			wi[j] = atenCubic64((float64(j+xmin) - center + 0.5) * invscale)
			total += wi[j]
		}
		if total != 0 {
			for j := range wi {
				wi[j] /= total
				wmax = max(wmax, wi[j])
			}
		}
		t.first[i], t.count[i] = xmin, xsize
	}
	for t.prec = 0; t.prec < 22; t.prec++ {
		if int(0.5+wmax*float64(int(1)<<(t.prec+1))) >= 1<<15 {
			break
		}
	}
	unit := float64(int(1) << t.prec)
	for i, v := range w {
		v *= unit
		if v < 0 {
			t.k[i] = int32(int16(int(-0.5 + v)))
		} else {
			t.k[i] = int32(int16(int(0.5 + v)))
		}
	}
	return t
}

// BicubicAAUint8 resizes 8-bit RGB to w x h as torch 2.x does for a uint8
// CPU tensor: torchvision.transforms.v2.functional.resize(img, (h, w),
// BICUBIC, antialias=True), which HF's fast Qwen2-VL/Qwen3-VL processors
// call on the decoded uint8 image when they run on the CPU, reaches ATen's
// native uint8 kernel (upsample_avx_bilinear_bicubic_uint8, after
// Pillow-SIMD): int16 weights, int32 sums, the horizontal pass into a uint8
// intermediate, then the vertical pass. It differs from the float path
// (BicubicAARGB, what the same call does on a CUDA tensor) by 1 LSB on
// about a quarter of the values. Integer arithmetic throughout, so the
// result is bit-exact.
func BicubicAAUint8(src RGB, w, h int) (RGB, error) {
	if err := src.check("bicubic uint8"); err != nil {
		return RGB{}, err
	}
	if w <= 0 || h <= 0 {
		return RGB{}, fmt.Errorf("resample: bicubic to %dx%d: size must be positive", w, h)
	}
	out := src
	if w != src.Width {
		out = fixedHorizontal(out, 0, out.Height, atenInt16Taps(src.Width, w))
	}
	if h != src.Height {
		out = fixedVertical(out, atenInt16Taps(src.Height, h))
	}
	if w == src.Width && h == src.Height {
		out.Pix = append([]byte(nil), src.Pix...)
	}
	return out, nil
}
