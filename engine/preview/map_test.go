package preview

import (
	"image/color"
	"testing"
)

// The map's picture of a [2, 2, 1, 2] latent, worked out by hand.
func TestMapImage(t *testing.T) {
	m := &Map{Channels: 2, RGB: [3][]float64{
		{1, 0, 0},      // red = channel 0
		{0, 0.5, 0.25}, // green = channel 1 / 2 + 1/4
		{-1, 0, 1},     // blue = 1 - channel 0
	}}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	// [c][t][h][w]: frame 1 holds channel 0 = {0.5, 2}, channel 1 = {1, -1}.
	lat := []float32{9, 9, 0.5, 2, 9, 9, 1, -1}
	img, err := m.Image(lat, 2, 2, 1, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []color.RGBA{{128, 191, 128, 255}, {255, 0, 0, 255}}
	for x, w := range want {
		if got := img.RGBAAt(x, 0); got != w {
			t.Errorf("pixel %d: %v, want %v", x, got, w)
		}
	}
	if _, err := m.Image(lat, 2, 2, 1, 2, 2); err == nil {
		t.Error("frame 2 of 2 accepted")
	}
	if _, err := m.Image(lat[:6], 2, 2, 1, 2, 0); err == nil {
		t.Error("a short latent accepted")
	}
}

func TestMapValidate(t *testing.T) {
	for name, m := range map[string]*Map{
		"no channels": {},
		"short row":   {Channels: 2, RGB: [3][]float64{{1, 2, 3}, {1, 2}, {1, 2, 3}}},
	} {
		if m.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A still field is the same in every step and bilinear between its grid
// points; AddStatic pairs each cell with the mean of its pixels over all
// frames.
func TestStaticFieldAndCellMeans(t *testing.T) {
	noise := []float32{0, 1, 2, 3} // one channel, 2x2 grid
	lat, err := StaticField(noise, 1, 2, 3, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0, 0.5, 1, 1, 1.5, 2, 2, 2.5, 3}
	for i, w := range want {
		if lat[i] != w || lat[9+i] != w {
			t.Fatalf("cell %d: %v and %v, want %v", i, lat[i], lat[9+i], w)
		}
	}
	// One latent cell at ratio 2, two frames: colour k's pixels are
	// k+{0,1,2,3} in frame 0 and k+{4,5,6,7} in frame 1.
	clip := make([]float32, 3*2*4)
	for k := range 3 {
		for i := range 8 {
			clip[k*8+i] = float32(k + i)
		}
	}
	f := NewFitter(1)
	if err := f.AddStatic([]float32{7, 7}, 1, 2, 1, 1, clip, 2, 2); err != nil {
		t.Fatal(err)
	}
	if f.Samples() != 1 || f.aty[2][1] != 5.5 || f.aty[0][0] != 7*3.5 {
		t.Fatalf("pair sums %v after %d samples, want mean colours 3.5, 4.5, 5.5 of x = 7", f.aty, f.Samples())
	}
}
