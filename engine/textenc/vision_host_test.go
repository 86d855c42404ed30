package textenc

import "testing"

// TestPatchify cuts the image case's frames and compares with the patch
// rows HF's processor layout produced (gen.py's patchify, ComfyUI's order).
func TestPatchify(t *testing.T) {
	f := openFixture(t)
	fr, shape := f.f32("image.frames.0") // [2, 3, H, W], already x*2-1
	T, C, H, W := int(shape[0]), int(shape[1]), int(shape[2]), int(shape[3])
	it := Item{Height: H, Width: W}
	for i := 0; i < T; i++ {
		fi := make([]float32, C*H*W)
		for j := range fi {
			fi[j] = (fr[i*C*H*W+j] + 1) / 2 // back to [0, 1]
		}
		it.Frames = append(it.Frames, fi)
	}
	if err := checkItem(f.cfg.Vision, it); err != nil {
		t.Fatal(err)
	}
	got := patchify(f.cfg.Vision, it)
	want, _ := f.f32("image.pixel_values")
	if len(got) != len(want) {
		t.Fatalf("patchify gave %d values, want %d", len(got), len(want))
	}
	e := relL2(got, want)
	t.Logf("patchify rel L2 %.2e", e)
	if e > 1e-6 {
		t.Errorf("patchify rel L2 %.3g", e)
	}
}

func TestPosEmbedInterpCorners(t *testing.T) {
	// Corner-aligned: the first and last patch of each row and column land
	// exactly on table corners with weight 1.
	idx, w := posEmbedInterp(4, 6, 2, 48)
	order := mergeOrder(4, 6, 2)
	for n, r := range order {
		y, x := r/6, r%6
		if (y == 0 || y == 3) && (x == 0 || x == 5) {
			want := int32((y/3)*47*48 + (x/5)*47)
			if idx[0][n] != want || w[0][n] != 1 {
				t.Errorf("patch (%d,%d): corner %d weight %g, want %d weight 1", y, x, idx[0][n], w[0][n], want)
			}
		}
		sum := w[0][n] + w[1][n] + w[2][n] + w[3][n]
		if sum < 0.99999 || sum > 1.00001 {
			t.Errorf("patch (%d,%d): weights sum to %g", y, x, sum)
		}
	}
}
