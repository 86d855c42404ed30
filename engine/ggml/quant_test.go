package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestF16MatchesGGML: our pure-Go half conversions agree bit for bit with
// ggml's C ones: every half value decoded, and encoding of random, tiny,
// huge and halfway floats.
func TestF16MatchesGGML(t *testing.T) {
	all := make([]uint16, 1<<16)
	for i := range all {
		all[i] = uint16(i)
	}
	want := make([]float32, len(all))
	cF16ToF32(all, want)
	got := F16ToF32(all)
	for i := range all {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(isNaN32(got[i]) && isNaN32(want[i])) {
			t.Fatalf("half %#04x: got %g, ggml %g", i, got[i], want[i])
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	var xs []float32
	for range 100000 {
		xs = append(xs, float32(r.NormFloat64()*math.Pow(2, float64(r.IntN(40)-25))))
	}
	for i := range all { // exact halves and the points halfway between neighbours
		f := got[i]
		if isNaN32(f) || math.IsInf(float64(f), 0) {
			continue
		}
		xs = append(xs, f, math.Float32frombits(math.Float32bits(f)+1<<12), math.Float32frombits(math.Float32bits(f)+1<<12-1))
	}
	xs = append(xs, 65504, 65520, 65519.99, 1e9, -1e9, 5.96e-8, 2.98e-8, 2.99e-8, float32(math.Inf(1)))
	ref := make([]uint16, len(xs))
	cF32ToF16(xs, ref)
	enc := F32ToF16(xs)
	for i := range xs {
		if enc[i] != ref[i] {
			t.Fatalf("f32 %g (%#08x): got %#04x, ggml %#04x", xs[i], math.Float32bits(xs[i]), enc[i], ref[i])
		}
	}
}

func isNaN32(f float32) bool { return f != f }

// TestBF16Rounding checks round-to-nearest-even against exact arithmetic.
func TestBF16Rounding(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 100000 {
		x := float32(r.NormFloat64() * 1000)
		b := BF16ToF32(F32ToBF16([]float32{x}))[0]
		// the two bf16 neighbours of x
		lo := math.Float32frombits(math.Float32bits(x) &^ 0xffff)
		hi := math.Float32frombits(math.Float32bits(lo) + 1<<16)
		dl, dh := math.Abs(float64(x-lo)), math.Abs(float64(hi-x))
		want := lo
		if dh < dl || (dh == dl && math.Float32bits(lo)>>16&1 == 1) {
			want = hi
		}
		if b != want {
			t.Fatalf("bf16(%g) = %g, want %g", x, b, want)
		}
	}
}

// TestQuantizeRoundTrip bounds q8_0 and q4_K errors by their formats:
// q8_0 blocks of 32 share one scale d = amax/127 stored as f16, so a value
// is within half a step of q·d, and q·d within |q|·d·2⁻¹¹ (|q| <= 127) of
// q·f16(d); q4_K (4.5 bits) keeps the relative RMS error of Gaussian data
// near 6%.
func TestQuantizeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	const rowLen, rows = 512, 8
	x := make([]float32, rowLen*rows)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	q := Quantize(Q8_0, x, rowLen)
	if len(q) != rows*Q8_0.RowBytes(rowLen) {
		t.Fatalf("q8_0: %d bytes", len(q))
	}
	y := Dequantize(Q8_0, q, len(x))
	for b := 0; b < len(x); b += 32 {
		amax := 0.0
		for _, v := range x[b : b+32] {
			amax = max(amax, math.Abs(float64(v)))
		}
		step := amax / 127
		for i := b; i < b+32; i++ {
			if e := math.Abs(float64(x[i] - y[i])); e > step*(0.5+127*0x1p-11)+1e-7 {
				t.Fatalf("q8_0 value %d: error %g exceeds the format's bound (step %g)", i, e, step)
			}
		}
	}
	y = Dequantize(Q4_K, Quantize(Q4_K, x, rowLen), len(x))
	var num, den float64
	for i := range x {
		num += float64((x[i] - y[i]) * (x[i] - y[i]))
		den += float64(x[i] * x[i])
	}
	rel := math.Sqrt(num / den)
	t.Logf("q4_K relative RMS error %.4f", rel)
	if rel > 0.1 || rel < 0.01 {
		t.Fatalf("q4_K relative RMS error %.4f outside [0.01, 0.1]", rel)
	}
}
