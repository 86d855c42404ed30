package resample

import (
	"fmt"
	"math"
)

// torchaudio.functional.resample's defaults.
const (
	audioLowpassWidth = 6
	audioRolloff      = 0.99
)

// audioKernel is torchaudio's _get_sinc_resample_kernel output for one
// rate pair: phases filters of taps coefficients, and the left padding.
type audioKernel struct {
	orig, next  int // rates after gcd reduction
	width, taps int
	k           []float32 // phases*taps, phase-major
}

// newAudioKernel reproduces _get_sinc_resample_kernel(orig, new, gcd, 6,
// 0.99, "sinc_interp_hann", dtype). torchaudio.functional.resample passes
// the waveform's dtype, so for float32 audio the kernel is computed in
// float32 tensor arithmetic (Python scalars become float32 operands);
// torchaudio.transforms.Resample leaves dtype None, which computes it in
// float64 and casts to float32 at the end (wide64). The two kernels give
// outputs 6e-6 apart (relative L2), so the choice matters at 1e-6.
func newAudioKernel(orig, next int, wide64 bool) audioKernel {
	g := gcd(orig, next)
	orig, next = orig/g, next/g
	base := float64(min(orig, next)) * audioRolloff
	width := int(math.Ceil(float64(audioLowpassWidth*orig) / base))
	taps := 2*width + orig
	kern := audioKernel{orig: orig, next: next, width: width, taps: taps, k: make([]float32, next*taps)}
	for p := range next {
		for j := range taps {
			if wide64 {
				kern.k[p*taps+j] = audioTap64(p, j, orig, next, width, base)
			} else {
				kern.k[p*taps+j] = audioTap32(p, j, orig, next, width, base)
			}
		}
	}
	return kern
}

// audioTap32 is one kernel value in the float32 arithmetic of
// functional.resample. sin and cos are evaluated in float64 and rounded,
// where torch uses SLEEF's 1-ulp float32 versions: the one source of
// difference (about 1e-7 relative).
func audioTap32(p, j, orig, next, width int, base float64) float32 {
	phase := float32(-p) / float32(next)
	idx := float32(j-width) / float32(orig)
	t := float32(phase+idx) * float32(base)
	t = min(max(t, -audioLowpassWidth), audioLowpassWidth)
	pi := float32(math.Pi)
	c := float32(math.Cos(float64(float32(float32(t*pi)/audioLowpassWidth) / 2)))
	window := float32(c * c)
	t = float32(t * pi)
	s := float32(1)
	if t != 0 {
		s = float32(math.Sin(float64(t))) / t
	}
	return float32(s * float32(window*float32(base/float64(orig))))
}

// audioTap64 is one kernel value as transforms.Resample computes it: in
// float64, except that the phase -p/new is an int64 tensor divided by an
// int and so lands in torch's default float32 before joining the float64
// index; the product is cast to float32.
func audioTap64(p, j, orig, next, width int, base float64) float32 {
	phase := float64(float32(-p) / float32(next))
	t := (phase + float64(j-width)/float64(orig)) * base
	t = min(max(t, -audioLowpassWidth), audioLowpassWidth)
	c := math.Cos(t * math.Pi / audioLowpassWidth / 2)
	window := c * c
	t *= math.Pi
	s := 1.0
	if t != 0 {
		s = math.Sin(t) / t
	}
	return float32(s * (window * (base / float64(orig))))
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// AudioLength is the number of samples torchaudio.functional.resample
// returns for n input samples: ceil(new*n/orig) with the quotient taken in
// float64 and then, as torch.as_tensor of a Python float does, rounded to
// float32 before the ceiling (torchaudio 2.x; 0.13 used math.ceil on the
// float64 quotient, which differs only for inputs of millions of samples).
func AudioLength(n, orig, next int) int {
	g := gcd(orig, next)
	orig, next = orig/g, next/g
	return int(math.Ceil(float64(float32(float64(next*n) / float64(orig)))))
}

// Audio resamples planar float32 channels from orig Hz to next Hz as
// torchaudio.functional.resample(waveform, orig, next) does with its
// defaults (lowpass_filter_width 6, rolloff 0.99, Hann-windowed sinc):
// rates reduced by their gcd, the waveform zero-padded by width on the left
// and width+orig on the right, a conv1d with stride orig whose next output
// channels interleave into the result, cut to AudioLength. Sums are taken
// in float64 (torch sums float32 in its own order), so outputs agree to
// about 1e-7 relative. Equal rates return a copy.
func Audio(channels [][]float32, orig, next int) ([][]float32, error) {
	return audio(channels, orig, next, false)
}

// AudioTransform is Audio as torchaudio.transforms.Resample(orig, next)
// computes it: the same convolution with the kernel built in float64 (see
// newAudioKernel).
func AudioTransform(channels [][]float32, orig, next int) ([][]float32, error) {
	return audio(channels, orig, next, true)
}

func audio(channels [][]float32, orig, next int, wide64 bool) ([][]float32, error) {
	if orig <= 0 || next <= 0 {
		return nil, fmt.Errorf("resample: audio %d Hz to %d Hz: rates must be positive", orig, next)
	}
	out := make([][]float32, len(channels))
	if orig == next {
		for c, ch := range channels {
			out[c] = append([]float32(nil), ch...)
		}
		return out, nil
	}
	kern := newAudioKernel(orig, next, wide64)
	for c, ch := range channels {
		out[c] = kern.apply(ch, AudioLength(len(ch), orig, next))
	}
	return out, nil
}

// apply is _apply_sinc_resample_kernel on one channel: output sample
// frame*next+p is the dot product of phase p's filter with the padded
// input starting at frame*orig.
func (kern audioKernel) apply(x []float32, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		frame, p := i/kern.next, i%kern.next
		f := kern.k[p*kern.taps : (p+1)*kern.taps]
		// Padded index frame*orig+j is input index frame*orig+j-width;
		// only the part inside the input contributes.
		start := frame*kern.orig - kern.width
		j0, j1 := max(0, -start), min(kern.taps, len(x)-start)
		var acc float64
		for j := j0; j < j1; j++ {
			acc += float64(x[start+j]) * float64(f[j])
		}
		out[i] = float32(acc)
	}
	return out
}
