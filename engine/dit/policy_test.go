package dit

import (
	"math"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/engine/layout"
)

// tolReduceOracle is the rel-max error allowed between the graph's pool →
// update → restore and the float64 oracle: f32 rounding of a mean, a
// product and a difference.
const tolReduceOracle = 1e-6

// reduceOracle is token reduction from its definition, in float64: the
// target video's horizontally adjacent rows are averaged in pairs (an odd
// last column stays alone), every other row passes as is; update stands
// for the pooled blocks; on the way out a paired row is its original plus
// scale × its pooled row's update, any other row its pooled row's value.
func reduceOracle(x [][]float64, v layout.Segment, update func(float64) float64, scale float64) [][]float64 {
	var groups [][]int
	for r := 0; r < v.Start; r++ {
		groups = append(groups, []int{r})
	}
	for line := 0; line < v.LatentT*v.GridH; line++ {
		for col := 0; col < v.GridW; col += 2 {
			a := v.Start + line*v.GridW + col
			if col+1 < v.GridW {
				groups = append(groups, []int{a, a + 1})
			} else {
				groups = append(groups, []int{a})
			}
		}
	}
	out := make([][]float64, len(x))
	for _, grp := range groups {
		h := len(x[grp[0]])
		pooled, upd := make([]float64, h), make([]float64, h)
		for k := range h {
			for _, r := range grp {
				pooled[k] += x[r][k] / float64(len(grp))
			}
			upd[k] = update(pooled[k])
		}
		for _, r := range grp {
			out[r] = make([]float64, h)
			for k := range h {
				if len(grp) == 2 {
					out[r][k] = x[r][k] + scale*(upd[k]-pooled[k])
				} else {
					out[r][k] = upd[k]
				}
			}
		}
	}
	return out
}

// The token-reduction policy's pooled → restored rows against the float64
// oracle, with the span inside one graph (resident) and split over two
// (streamed: the kept rows pass through the host).
func TestTokenReductionOracle(t *testing.T) {
	b := cpuBackend(t)
	m := loadTiny(t, b, false, Options{ExactKV: true})
	segs, _ := segments(t, "t2va") // target video 2 x (2 x 3): pairs and an odd column
	s, err := m.NewSequence(segs, nil)
	if err != nil {
		t.Fatal(err)
	}
	const scale = 0.75 // not 1, so a restore that drops the scale fails
	if err := m.SetTokenReduction(&TokenReductionConfig{Begin: 1, End: 2, Scale: scale}); err != nil {
		t.Fatal(err)
	}
	h, rows := m.Cfg.Hidden, s.rows
	x, host := make([][]float64, rows), make([]float32, rows*h)
	for r := range x {
		x[r] = make([]float64, h)
		for k := range h {
			v := float32(math.Sin(float64(r*h+k)*0.37) * 2)
			x[r][k], host[r*h+k] = float64(v), v
		}
	}
	// the pooled blocks' stand-in: row-wise and nonlinear, so a restore
	// that mixes up rows or deltas cannot agree by accident
	update := func(v float64) float64 { return 0.5*v*v - v }
	updateGraph := func(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
		return g.Sub(g.Scale(g.Mul(x, x), 0.5), x)
	}
	want := reduceOracle(x, s.targetVideo, update, scale)
	for _, streamed := range []bool{false, true} {
		tr := m.tokenReduction(s, make([]int32, rows), 0)
		f := m.newFlow(s, make([]int32, rows), []policy{tr}, streamed)
		g := b.NewGraph(0)
		m.begin(f, g)
		f.x = g.Input("x", ggml.F32, h, rows)
		f.x.SetF32(host)
		m.cross(f, tr.begin)
		if f.grid == f.full || f.x.Ne(1) != len(tr.grid.idx) {
			t.Fatalf("streamed %v: entering the span did not pool", streamed)
		}
		f.x = updateGraph(g, f.x)
		if streamed {
			if err := m.computeFlow("pooled", f); err != nil {
				t.Fatal(err)
			}
			g.Free()
			f.streamed = false
			g = b.NewGraph(0)
			m.begin(f, g)
		}
		m.cross(f, -1)
		g.Output(f.x)
		if err := m.computeFlow("restored", f); err != nil {
			t.Fatal(err)
		}
		got := f.x.F32()
		g.Free()
		var worst, peak float64
		for r := range want {
			for k := range h {
				worst = math.Max(worst, math.Abs(float64(got[r*h+k])-want[r][k]))
				peak = math.Max(peak, math.Abs(want[r][k]))
			}
		}
		t.Logf("streamed %v: restored rows vs float64 oracle: rel max %.2e", streamed, worst/peak)
		if !(worst/peak <= tolReduceOracle) {
			t.Errorf("streamed %v: restored rows differ from the oracle by rel max %.3g > %g", streamed, worst/peak, tolReduceOracle)
		}
	}
}
