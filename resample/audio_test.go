package resample

import (
	"math"
	"testing"
)

// audioMaxRelL2 is the agreement required with torchaudio: its float32
// kernel uses SLEEF sin/cos (1 ulp) and conv1d sums in float32, we round
// libm values and sum in float64, so outputs differ around 1e-7.
const audioMaxRelL2 = 1e-6

// audioRefs: Debian 12's torchaudio 0.13.1 and torchaudio 2.11.
var audioRefs = []string{"audio.json.gz", "torch2/audio.json.gz"}

func TestAudioMatchesTorchaudio(t *testing.T) {
	for _, file := range audioRefs {
		t.Run(file, func(t *testing.T) {
			versions, cases := loadRef(t, file)
			var worst, worstT float64
			for _, c := range cases {
				x := testAudio(c.Samples, c.Channels, c.Seed)
				var flat []float32
				for _, ch := range x {
					flat = append(flat, ch...)
				}
				checkSHA(t, c, bytesOfFloat32s(flat))
				worst = max(worst, checkAudio(t, c.Name+" functional", Audio, x, c, c.AudioOut))
				worstT = max(worstT, checkAudio(t, c.Name+" transforms", AudioTransform, x, c, c.AudioOutT))
			}
			t.Logf("%v: %d cases, worst relative L2 %.3g (functional.resample), %.3g (transforms.Resample)", versions, len(cases), worst, worstT)
		})
	}
}

// checkAudio runs one resampler on x and returns its worst per-channel
// relative L2 error against want.
func checkAudio(t *testing.T, name string, f func([][]float32, int, int) ([][]float32, error), x [][]float32, c refCase, want []string) float64 {
	t.Helper()
	got, err := f(x, c.Orig, c.New)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(got) {
		t.Fatalf("%s: %d channels, reference has %d", name, len(got), len(want))
	}
	var worst float64
	for ch, s := range want {
		w := float32sLE(t, s)
		if len(got[ch]) != len(w) {
			t.Fatalf("%s: channel %d has %d samples, torchaudio %d", name, ch, len(got[ch]), len(w))
		}
		e := relL2(got[ch], w)
		worst = max(worst, e)
		if e > audioMaxRelL2 {
			t.Errorf("%s channel %d: relative L2 error %.3g", name, ch, e)
		}
	}
	return worst
}

func relL2(a, b []float32) float64 {
	var num, den float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	return math.Sqrt(num / den)
}

func TestAudioLength(t *testing.T) {
	for _, tc := range []struct{ n, orig, next, want int }{
		{8827, 44100, 32000, 6406}, // ceil(6405.44)
		{9600, 48000, 32000, 6400},
		{1, 44100, 32000, 1},
		{3201, 16000, 32000, 6402},
		// 32000*n/44100 = 320119 + 1/441: float32 rounds the quotient to
		// 320119 first, so torchaudio 2.x returns 320119 samples (0.13's
		// math.ceil gave 320120); checked with torch.as_tensor.
		{441164, 44100, 32000, 320119},
	} {
		if got := AudioLength(tc.n, tc.orig, tc.next); got != tc.want {
			t.Errorf("AudioLength(%d, %d, %d) = %d, want %d", tc.n, tc.orig, tc.next, got, tc.want)
		}
	}
}

func TestAudioSameRateCopies(t *testing.T) {
	x := [][]float32{{1, 2, 3}}
	y, err := Audio(x, 32000, 32000)
	if err != nil {
		t.Fatal(err)
	}
	y[0][0] = 9
	if x[0][0] != 1 || len(y[0]) != 3 {
		t.Fatal("equal rates must return a copy of the input")
	}
	if _, err := Audio(x, 0, 32000); err == nil {
		t.Fatal("zero rate accepted")
	}
}
