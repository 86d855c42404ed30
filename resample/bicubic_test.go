package resample

import (
	"math"
	"testing"
)

// Limits for the float-path comparison. ATen sums float32 products in the
// same order we do but not always with the same fusing (see atenAxis), so
// float outputs can differ in the last bits and, rarely, a value near .5
// rounds the other way after round_(). Measured: at most 9.2e-5 and 2 bytes
// in 397152 (see the test log).
const (
	bicubicMaxFloatErr  = 2e-4 // absolute, on the 0..255 scale
	bicubicMaxOffPer    = 1e4  // at most 1 byte in this many may be 1 LSB off
	bicubicMaxByteDelta = 1
)

// bicubicRefs are the torch references: Debian 12's torch 1.13 (float path
// only; its weights differ from torch 2's by a few ulps) and torch 2.11.
var bicubicRefs = []string{"bicubic.json.gz", "torch2/bicubic.json.gz"}

// TestBicubicAAMatchesTorch compares BicubicAARGB's bytes and BicubicAA's
// floats with torch's float-path F.interpolate(bicubic, antialias=True).
func TestBicubicAAMatchesTorch(t *testing.T) {
	for _, file := range bicubicRefs {
		t.Run(file, func(t *testing.T) { checkBicubicFloatPath(t, file) })
	}
}

func checkBicubicFloatPath(t *testing.T, file string) {
	versions, cases := loadRef(t, file)
	var off, all, floatCases int
	var worst float64
	for _, c := range cases {
		src := testImage(c.Src[0], c.Src[1], c.Seed)
		checkSHA(t, c, src.Pix)
		got, err := BicubicAARGB(src, c.Size[0], c.Size[1])
		if err != nil {
			t.Fatal(err)
		}
		want := mustB64(t, c.Out)
		if len(got.Pix) != len(want) {
			t.Fatalf("%s: got %d bytes, want %d", c.Name, len(got.Pix), len(want))
		}
		n, maxd := countDiff(got.Pix, want)
		off += n
		all += len(want)
		if maxd > bicubicMaxByteDelta || float64(n) > max(2, float64(len(want))/bicubicMaxOffPer) {
			t.Errorf("%s: %d of %d bytes differ from torch, max %d LSB", c.Name, n, len(want), maxd)
		}
		if c.Float == "" {
			continue
		}
		floatCases++
		planes, err := BicubicAA(PlanesFromRGB(src), c.Size[0], c.Size[1])
		if err != nil {
			t.Fatal(err)
		}
		e := maxAbsDiff(planes.Pix, float32sLE(t, c.Float))
		worst = max(worst, e)
		if e > bicubicMaxFloatErr {
			t.Errorf("%s: float output differs from torch by up to %g", c.Name, e)
		}
	}
	t.Logf("%v: float path %d of %d bytes 1 LSB off; float max abs error %g (0..255 scale) over %d cases", versions, off, all, worst, floatCases)
}

// TestBicubicAAUint8MatchesTorch holds BicubicAAUint8 to torchvision's
// uint8 CPU resize (ATen's native kernel) byte for byte.
func TestBicubicAAUint8MatchesTorch(t *testing.T) {
	versions, cases := loadRef(t, "torch2/bicubic.json.gz")
	checked, total := 0, 0
	for _, c := range cases {
		if c.OutU8 == "" {
			continue
		}
		checked++
		src := testImage(c.Src[0], c.Src[1], c.Seed)
		got, err := BicubicAAUint8(src, c.Size[0], c.Size[1])
		if err != nil {
			t.Fatal(err)
		}
		want := mustB64(t, c.OutU8)
		if len(got.Pix) != len(want) {
			t.Fatalf("%s: got %d bytes, want %d", c.Name, len(got.Pix), len(want))
		}
		n, maxd := countDiff(got.Pix, want)
		total += n
		if n != 0 {
			t.Errorf("%s: %d of %d bytes differ from torch's uint8 kernel (max %d LSB)", c.Name, n, len(want), maxd)
		}
	}
	if checked == 0 {
		t.Fatal("reference has no uint8 cases (regenerate with torch >= 2.1)")
	}
	t.Logf("%v: native uint8 path, %d cases, %d differing bytes", versions, checked, total)
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var m float64
	for i := range a {
		m = max(m, math.Abs(float64(a[i])-float64(b[i])))
	}
	return m
}

// TestBicubicAAConstant checks a property independent of the reference:
// normalized weights reproduce a flat image at any scale.
func TestBicubicAAConstant(t *testing.T) {
	src := Planes{Channels: 1, Height: 37, Width: 23, Pix: make([]float32, 37*23)}
	for i := range src.Pix {
		src.Pix[i] = 200
	}
	for _, sz := range [][2]int{{5, 9}, {23, 100}, {64, 37}, {1, 1}} {
		out, err := BicubicAA(src, sz[0], sz[1])
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range out.Pix {
			if math.Abs(float64(v)-200) > 1e-3 {
				t.Fatalf("%dx%d: flat 200 became %g", sz[0], sz[1], v)
			}
		}
	}
}

func TestRGBFromPlanesRoundsHalfToEven(t *testing.T) {
	p := Planes{Channels: 3, Height: 1, Width: 2, Pix: []float32{0.5, 1.5, 2.5, -3, 254.5, 300}}
	got, err := RGBFromPlanes(p)
	if err != nil {
		t.Fatal(err)
	}
	// Planar R = (0.5, 1.5), G = (2.5, -3), B = (254.5, 300).
	want := []byte{0, 2, 254, 2, 0, 255}
	for i := range want {
		if got.Pix[i] != want[i] {
			t.Fatalf("got %v, want %v", got.Pix, want)
		}
	}
}
