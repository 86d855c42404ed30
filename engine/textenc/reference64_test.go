package textenc

import (
	"testing"
)

// Tolerances of the float64 transcription against HF's float32 run: the
// gap is HF's own float32 rounding.
const tolRef64 = 1e-5

func toF64(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func positions3(f *fixture, c string) [3][]int32 {
	p := f.i32(c + ".position_ids")
	S := len(p) / 3
	return [3][]int32{p[:S], p[S : 2*S], p[2*S:]}
}

// TestReference64 checks the float64 transcription of the reference math
// against HF's outputs, so it can stand in for HF where no fixture exists.
func TestReference64(t *testing.T) {
	f := openFixture(t)
	r := newRef64(t, f)
	n := f.layersUsed()
	for _, c := range []string{"text", "image", "video", "mixed"} {
		ids := f.i32(c + ".input_ids")
		S := len(ids)
		emb := r.embed64(ids)
		var visual []bool
		var ds [][]float64
		if f.has(c + ".vision_embeds") {
			mask := f.i32(c + ".visual_mask")
			visual = make([]bool, S)
			ve, _ := f.f32(c + ".vision_embeds")
			grid := f.i32(c + ".grid_thw")
			pv, pvShape := f.f32(c + ".pixel_values")
			row := int(pvShape[1])
			D := f.cfg.Text.Hidden
			var merged []float64
			ds = make([][]float64, len(f.cfg.Vision.Deepstack))
			off := 0
			for it := 0; it < len(grid)/3; it++ {
				gh, gw := int(grid[3*it+1]), int(grid[3*it+2])
				m, d, _ := r.visionTower64(toF64(pv[off*row:(off+gh*gw)*row]), gh, gw)
				off += gh * gw
				merged = append(merged, m...)
				for k := range d {
					ds[k] = append(ds[k], d[k]...)
				}
			}
			t.Logf("%s: vision tower rel L2 %.2e", c, relL2f64(merged, ve))
			if e := relL2f64(merged, ve); e > tolRef64 {
				t.Errorf("%s: vision tower rel L2 %.3g > %g", c, e, tolRef64)
			}
			for k := range ds {
				want, _ := f.f32(c + ".deepstack." + itoa(k))
				if e := relL2f64(ds[k], want); e > tolRef64 {
					t.Errorf("%s: deepstack %d rel L2 %.3g", c, k, e)
				}
			}
			j := 0
			for s := 0; s < S; s++ {
				visual[s] = mask[s] != 0
				if visual[s] {
					copy(emb[s*D:(s+1)*D], merged[j*D:(j+1)*D])
					j++
				}
			}
		}
		want, _ := f.f32(c + ".inputs_embeds")
		if e := relL2f64(emb, want); e > tolRef64 {
			t.Errorf("%s: inputs_embeds rel L2 %.3g", c, e)
		}
		out := r.textModel64(emb, S, positions3(f, c), n, visual, ds)
		want, _ = f.f32(c + ".hidden")
		e := relL2f64(out, want)
		t.Logf("%s: hidden after %d layers rel L2 %.2e", c, n, e)
		if e > tolRef64 {
			t.Errorf("%s: hidden rel L2 %.3g > %g", c, e, tolRef64)
		}
	}
}
