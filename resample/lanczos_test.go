package resample

import (
	"bytes"
	"testing"
)

// TestLanczosMatchesPillow holds Lanczos and CoverLanczos to Pillow's own
// output byte for byte: any differing byte fails the case.
func TestLanczosMatchesPillow(t *testing.T) {
	versions, cases := loadRef(t, "pil.json.gz")
	t.Logf("reference: %v", versions)
	total := 0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			src := testImage(c.Src[0], c.Src[1], c.Seed)
			checkSHA(t, c, src.Pix)
			var got RGB
			var err error
			switch c.Op {
			case "resize":
				got, err = Lanczos(src, c.Size[0], c.Size[1])
			case "cover":
				if rw, rh := CoverSize(c.Src[0], c.Src[1], c.Size[0], c.Size[1]); rw != c.Resized[0] || rh != c.Resized[1] {
					t.Errorf("CoverSize = %dx%d, official rule gives %dx%d", rw, rh, c.Resized[0], c.Resized[1])
				}
				got, err = CoverLanczos(src, c.Size[0], c.Size[1])
			default:
				t.Fatalf("unknown op %q", c.Op)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := mustB64(t, c.Out)
			if got.Width != c.Size[0] || got.Height != c.Size[1] || len(got.Pix) != len(want) {
				t.Fatalf("got %dx%d (%d bytes), want %dx%d (%d bytes)", got.Width, got.Height, len(got.Pix), c.Size[0], c.Size[1], len(want))
			}
			diff, maxd := countDiff(got.Pix, want)
			total += diff
			if diff != 0 {
				t.Errorf("%d of %d bytes differ from Pillow (max %d LSB)", diff, len(want), maxd)
			}
		})
	}
	t.Logf("Pillow Lanczos: %d cases, %d differing bytes in all", len(cases), total)
}

func countDiff(a, b []byte) (n, maxd int) {
	for i := range a {
		d := int(a[i]) - int(b[i])
		if d < 0 {
			d = -d
		}
		if d != 0 {
			n++
			maxd = max(maxd, d)
		}
	}
	return n, maxd
}

// TestCoverLanczosIsResizeThenCrop checks the shortcut CoverLanczos takes
// (computing only the kept window) against the literal rule: the full
// Lanczos resize, then the centred crop.
func TestCoverLanczosIsResizeThenCrop(t *testing.T) {
	for _, tc := range []struct{ sw, sh, tw, th int }{
		{200, 150, 128, 128}, {150, 200, 136, 102}, {61, 97, 40, 40}, {400, 3, 32, 32}, {30, 20, 100, 100},
	} {
		src := testImage(tc.sw, tc.sh, 5)
		got, err := CoverLanczos(src, tc.tw, tc.th)
		if err != nil {
			t.Fatal(err)
		}
		rw, rh := CoverSize(tc.sw, tc.sh, tc.tw, tc.th)
		full, err := Lanczos(src, rw, rh)
		if err != nil {
			t.Fatal(err)
		}
		want := cropRGB(full, (rw-tc.tw)/2, (rh-tc.th)/2, tc.tw, tc.th)
		if !bytes.Equal(got.Pix, want.Pix) {
			n, _ := countDiff(got.Pix, want.Pix)
			t.Errorf("%dx%d -> %dx%d: window differs from resize-then-crop in %d bytes", tc.sw, tc.sh, tc.tw, tc.th, n)
		}
	}
}

// TestCoverSizeRounding pins the Python round (half to even) in the rule.
func TestCoverSizeRounding(t *testing.T) {
	for _, tc := range []struct{ sw, sh, tw, th, rw, rh int }{
		{13, 4, 2, 2, 6, 2}, // 6.5 rounds to 6
		{15, 4, 2, 2, 8, 2}, // 7.5 rounds to 8
		{4000, 3000, 2720, 2048, 2731, 2048},
		{1280, 720, 1344, 768, 1365, 768},
		{100, 100, 50, 80, 80, 80},
	} {
		rw, rh := CoverSize(tc.sw, tc.sh, tc.tw, tc.th)
		if rw != tc.rw || rh != tc.rh {
			t.Errorf("CoverSize(%d, %d, %d, %d) = %dx%d, want %dx%d", tc.sw, tc.sh, tc.tw, tc.th, rw, rh, tc.rw, tc.rh)
		}
	}
}

func TestLanczosRejectsBadInput(t *testing.T) {
	if _, err := Lanczos(RGB{Width: 2, Height: 2, Pix: make([]byte, 5)}, 1, 1); err == nil {
		t.Error("short pixel buffer accepted")
	}
	if _, err := Lanczos(NewRGB(2, 2), 0, 1); err == nil {
		t.Error("zero width accepted")
	}
	if _, err := CoverLanczos(NewRGB(2, 2), 1, -1); err == nil {
		t.Error("negative height accepted")
	}
}
