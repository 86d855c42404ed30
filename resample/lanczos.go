package resample

import (
	"fmt"
	"math"
)

// RGB is a picture as packed 8-bit RGB: row-major, 3 bytes per pixel, no
// row padding, so len(Pix) == Width*Height*3.
type RGB struct {
	Width, Height int
	Pix           []byte
}

// NewRGB allocates a black w x h picture.
func NewRGB(w, h int) RGB { return RGB{Width: w, Height: h, Pix: make([]byte, w*h*3)} }

func (p RGB) check(op string) error {
	if p.Width <= 0 || p.Height <= 0 {
		return fmt.Errorf("resample: %s: empty %dx%d picture", op, p.Width, p.Height)
	}
	if len(p.Pix) != p.Width*p.Height*3 {
		return fmt.Errorf("resample: %s: %dx%d picture has %d bytes, want %d", op, p.Width, p.Height, len(p.Pix), p.Width*p.Height*3)
	}
	return nil
}

// pilPrecisionBits is Pillow's PRECISION_BITS for 8-bit bands (32 - 8 - 2):
// coefficients are integers scaled by 2^22, which leaves two bits of
// headroom for lobes that push a sum below 0 or above 255.
const pilPrecisionBits = 22

// pilLanczosSupport is the half-width of Pillow's Lanczos filter (a = 3).
const pilLanczosSupport = 3.0

// pilSinc is Pillow's sinc_filter: sin(pi x)/(pi x), 1 at 0.
func pilSinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	x *= math.Pi
	return math.Sin(x) / x
}

// pilLanczos is Pillow's lanczos_filter: sinc(x) sinc(x/3) on [-3, 3),
// zero elsewhere (note the half-open interval).
func pilLanczos(x float64) float64 {
	if -3.0 <= x && x < 3.0 {
		return pilSinc(x) * pilSinc(x/3)
	}
	return 0
}

// fixedTaps are the fixed-point coefficients of one separable pass: output
// i reads count[i] source samples starting at first[i], weighted by
// k[i*ksize : i*ksize+count[i]], a weight of 1 being 1<<prec. Pillow uses
// prec 22; ATen's uint8 path picks prec per pass.
type fixedTaps struct {
	first, count []int
	k            []int32
	ksize        int
	prec         uint
}

// pilLanczosTaps reproduces Pillow's precompute_coeffs followed by
// normalize_coeffs_8bpc for a resize of inSize samples to outSize (box
// 0..inSize), for the outputs lo..lo+n-1 only: each output's taps depend on
// its own index alone, so a crop of a huge resize costs only the crop.
func pilLanczosTaps(inSize, outSize, lo, n int) fixedTaps {
	// Pillow holds the box in float and divides in double; for sizes below
	// 2^24 the float is exact, so this is the same value.
	scale := float64(inSize) / float64(outSize)
	filterscale := max(scale, 1.0)
	support := pilLanczosSupport * filterscale
	ksize := int(math.Ceil(support))*2 + 1
	t := fixedTaps{first: make([]int, n), count: make([]int, n), k: make([]int32, n*ksize), ksize: ksize, prec: pilPrecisionBits}
	w := make([]float64, ksize)
	inv := 1.0 / filterscale
	for i := range n {
		center := (float64(lo+i) + 0.5) * scale
		// Truncation toward zero, then clamping, is Pillow's "round".
		xmin := max(int(center-support+0.5), 0)
		xmax := min(int(center+support+0.5), inSize)
		cnt := xmax - xmin
		var sum float64
		for x := range cnt {
			w[x] = pilLanczos((float64(x+xmin) - center + 0.5) * inv)
			sum += w[x]
		}
		k := t.k[i*ksize : i*ksize+ksize]
		for x := range cnt {
			v := w[x]
			if sum != 0 {
				v /= sum
			}
			k[x] = pilFixed(v)
		}
		t.first[i], t.count[i] = xmin, cnt
	}
	return t
}

// pilFixed converts a normalized weight to Pillow's 2^22 fixed point,
// rounding half away from zero by the weight's sign, then truncating.
func pilFixed(v float64) int32 {
	if v < 0 {
		return int32(-0.5 + v*(1<<pilPrecisionBits))
	}
	return int32(0.5 + v*(1<<pilPrecisionBits))
}

// clip8 is Pillow's clip8 (and ATen's srai + saturating packs): drop the
// prec fraction bits (arithmetic shift, so negative sums floor) and
// saturate to 0..255.
func clip8(ss int32, prec uint) byte {
	v := ss >> prec
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return byte(v)
}

// fixedHorizontal is Pillow's ImagingResampleHorizontal_8bpc for 3 bands
// (and ATen's ImagingResampleHorizontal for uint8): source rows
// y0..y0+rows-1 resampled along x into a len(t.first)-wide 8-bit picture.
// The int32 sum starts at half a unit so that the final shift rounds.
func fixedHorizontal(src RGB, y0, rows int, t fixedTaps) RGB {
	out := NewRGB(len(t.first), rows)
	for y := range rows {
		row := src.Pix[(y0+y)*src.Width*3:]
		o := out.Pix[y*out.Width*3:]
		for i := range out.Width {
			k := t.k[i*t.ksize:]
			half := int32(1) << (t.prec - 1)
			s0, s1, s2 := half, half, half
			p := row[t.first[i]*3:]
			for x := range t.count[i] {
				s0 += int32(p[3*x]) * k[x]
				s1 += int32(p[3*x+1]) * k[x]
				s2 += int32(p[3*x+2]) * k[x]
			}
			o[3*i], o[3*i+1], o[3*i+2] = clip8(s0, t.prec), clip8(s1, t.prec), clip8(s2, t.prec)
		}
	}
	return out
}

// fixedVertical is ImagingResampleVertical_8bpc for 3 bands (ATen's
// ImagingResampleVertical for uint8); t.first is relative to src's first
// row.
func fixedVertical(src RGB, t fixedTaps) RGB {
	out := NewRGB(src.Width, len(t.first))
	stride := src.Width * 3
	for i := range out.Height {
		k := t.k[i*t.ksize:]
		o := out.Pix[i*stride : (i+1)*stride]
		base := t.first[i] * stride
		for x := range o {
			s := int32(1) << (t.prec - 1)
			for y := range t.count[i] {
				s += int32(src.Pix[base+y*stride+x]) * k[y]
			}
			o[x] = clip8(s, t.prec)
		}
	}
	return out
}

// Lanczos resizes src to w x h exactly as Pillow's
// Image.resize((w, h), Image.Resampling.LANCZOS) does for an RGB image
// (reducing_gap None, whole-image box): libImaging's ImagingResample with
// 2^22 fixed-point coefficients, the horizontal pass first into an 8-bit
// intermediate, then the vertical pass; a pass whose size does not change
// is skipped, and an unchanged size is a copy. The result is bit-exact.
func Lanczos(src RGB, w, h int) (RGB, error) {
	if err := src.check("lanczos"); err != nil {
		return RGB{}, err
	}
	if w <= 0 || h <= 0 {
		return RGB{}, fmt.Errorf("resample: lanczos to %dx%d: size must be positive", w, h)
	}
	return pilResizeRegion(src, w, h, 0, 0, w, h), nil
}

// pilResizeRegion is the cw x ch window at (x0, y0) of Pillow's w x h
// Lanczos resize of src, computed without the rest of the resize.
func pilResizeRegion(src RGB, w, h, x0, y0, cw, ch int) RGB {
	img := src
	var vt fixedTaps
	needH, needV := w != src.Width, h != src.Height
	rowLo, rowN := y0, ch
	if needV {
		vt = pilLanczosTaps(src.Height, h, y0, ch)
		// The rows the vertical pass reads, as Pillow's ybox_first/last.
		rowLo = vt.first[0]
		rowN = vt.first[ch-1] + vt.count[ch-1] - rowLo
		for i := range vt.first {
			vt.first[i] -= rowLo
		}
	}
	if needH {
		img = fixedHorizontal(src, rowLo, rowN, pilLanczosTaps(src.Width, w, x0, cw))
	} else {
		img = cropRGB(src, x0, rowLo, cw, rowN)
	}
	if needV {
		return fixedVertical(img, vt)
	}
	return img
}

// cropRGB copies the cw x ch window at (x0, y0).
func cropRGB(src RGB, x0, y0, cw, ch int) RGB {
	out := NewRGB(cw, ch)
	for y := range ch {
		s := src.Pix[((y0+y)*src.Width+x0)*3:]
		copy(out.Pix[y*cw*3:(y+1)*cw*3], s[:cw*3])
	}
	return out
}

// CoverSize is the official pipeline's cover rule for a sw x sh picture and
// a tw x th canvas: scale = max(tw/sw, th/sh), each side sw*scale rounded
// half to even (Python's round) and at least the canvas side. The caller
// then crops the canvas from the centre: left (rw-tw)//2, top (rh-th)//2.
func CoverSize(sw, sh, tw, th int) (rw, rh int) {
	scale := max(float64(tw)/float64(sw), float64(th)/float64(sh))
	rw = max(tw, int(math.RoundToEven(float64(sw)*scale)))
	rh = max(th, int(math.RoundToEven(float64(sh)*scale)))
	return rw, rh
}

// CoverLanczos brings src to exactly tw x th the way the official pipeline
// does: Pillow Lanczos to CoverSize, then the centred tw x th crop
// (left = (rw-tw)//2, top = (rh-th)//2). Only the kept window is computed,
// which gives the same bytes because each output pixel of Pillow's
// separable resample depends on its own coordinates alone.
func CoverLanczos(src RGB, tw, th int) (RGB, error) {
	if err := src.check("cover"); err != nil {
		return RGB{}, err
	}
	if tw <= 0 || th <= 0 {
		return RGB{}, fmt.Errorf("resample: cover to %dx%d: size must be positive", tw, th)
	}
	rw, rh := CoverSize(src.Width, src.Height, tw, th)
	return pilResizeRegion(src, rw, rh, (rw-tw)/2, (rh-th)/2, tw, th), nil
}
