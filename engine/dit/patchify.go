package dit

import "fmt"

// PatchifyVideo turns a latent [c, t, h, w] (row-major) into rows ordered
// (t, h/2, w/2), each c·2·2 wide, channel-major then dh then dw — the
// layout video_patch_proj expects.
func PatchifyVideo(lat []float32, c, t, h, w int) ([]float32, error) {
	if err := checkVideo(len(lat), c, t, h, w); err != nil {
		return nil, err
	}
	out := make([]float32, len(lat))
	videoPatches(c, t, h, w, func(row, lat0 int) {
		out[row], out[row+1] = lat[lat0], lat[lat0+1]
		out[row+2], out[row+3] = lat[lat0+w], lat[lat0+w+1]
	})
	return out, nil
}

// UnpatchifyVideo inverts PatchifyVideo.
func UnpatchifyVideo(rows []float32, c, t, h, w int) ([]float32, error) {
	if err := checkVideo(len(rows), c, t, h, w); err != nil {
		return nil, err
	}
	out := make([]float32, len(rows))
	videoPatches(c, t, h, w, func(row, lat0 int) {
		out[lat0], out[lat0+1] = rows[row], rows[row+1]
		out[lat0+w], out[lat0+w+1] = rows[row+2], rows[row+3]
	})
	return out, nil
}

// videoPatches walks the 2x2 patches of a [c, t, h, w] latent in row
// order, giving for each the offset of its 4 values in the rows and of its
// top-left value in the latent; both directions share this one mapping.
func videoPatches(c, t, h, w int, visit func(row, lat0 int)) {
	row := 0
	for ti := 0; ti < t; ti++ {
		for y := 0; y < h/2; y++ {
			for x := 0; x < w/2; x++ {
				for ci := 0; ci < c; ci++ {
					visit(row, ((ci*t+ti)*h+2*y)*w+2*x)
					row += 4
				}
			}
		}
	}
}

func checkVideo(n, c, t, h, w int) error {
	if c <= 0 || t <= 0 || h <= 0 || w <= 0 || h%2 != 0 || w%2 != 0 {
		return fmt.Errorf("dit: video latent [%d, %d, %d, %d] needs positive sizes and even height and width", c, t, h, w)
	}
	if n != c*t*h*w {
		return fmt.Errorf("dit: video latent has %d values, [%d, %d, %d, %d] needs %d", n, c, t, h, w, c*t*h*w)
	}
	return nil
}

// PackAudio turns an audio latent [c, 2, ta] into 2·ta rows of width c:
// all left-channel rows (t = 0..ta-1), then all right-channel rows.
func PackAudio(lat []float32, c, ta int) ([]float32, error) {
	if c <= 0 || ta <= 0 || len(lat) != c*2*ta {
		return nil, fmt.Errorf("dit: audio latent has %d values, [%d, 2, %d] needs %d", len(lat), c, ta, c*2*ta)
	}
	out := make([]float32, len(lat))
	for ch := 0; ch < 2; ch++ {
		for t := 0; t < ta; t++ {
			row := (ch*ta + t) * c
			for ci := 0; ci < c; ci++ {
				out[row+ci] = lat[(ci*2+ch)*ta+t]
			}
		}
	}
	return out, nil
}

// UnpackAudio inverts PackAudio.
func UnpackAudio(rows []float32, c, ta int) ([]float32, error) {
	if c <= 0 || ta <= 0 || len(rows) != c*2*ta {
		return nil, fmt.Errorf("dit: %d audio row values, [%d, 2, %d] needs %d", len(rows), c, ta, c*2*ta)
	}
	out := make([]float32, len(rows))
	for ch := 0; ch < 2; ch++ {
		for t := 0; t < ta; t++ {
			row := (ch*ta + t) * c
			for ci := 0; ci < c; ci++ {
				out[(ci*2+ch)*ta+t] = rows[row+ci]
			}
		}
	}
	return out, nil
}
