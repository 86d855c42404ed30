package dit

import (
	"fmt"
	"math"
	"testing"

	"h3studio/engine/layout"
)

// Pairs on a 3-wide grid: columns (0,1) pool, column 2 stays alone.
func TestPooledGridMaps(t *testing.T) {
	b := cpuBackend(t)
	m := loadTiny(t, b, false, Options{ExactKV: true})
	segs, _ := segments(t, "t2va") // target video 2 x (2 x 3) rows at 19..30
	s, err := m.NewSequence(segs, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := s.pooledGrid()
	if p.rows != 19+2*2*2 {
		t.Fatalf("%d pooled rows, want %d", p.rows, 19+8)
	}
	if got := fmt.Sprint(p.first[19:23], p.second[19:23]); got != "[19 21 22 24] [20 21 23 24]" {
		t.Errorf("pairs %s", got)
	}
	if got := fmt.Sprint(p.parent[17:25], p.delta[19:25]); got != "[17 18 19 19 20 21 21 22] [1 1 0 1 1 0]" {
		t.Errorf("parents and delta rows %s", got)
	}
	// the pooled position is the pair's mean: w between columns 0 and 1
	full := segs[2].AppendPositions(nil)
	wantCos, _ := ropeTables([][3]float64{{full[0][0], full[0][1], (full[0][2] + full[1][2]) / 2}}, m.invFreq)
	half := 3 * m.Cfg.RopeFreqs
	if fmt.Sprint(p.cos[19*half:20*half]) != fmt.Sprint(wantCos) {
		t.Error("pooled RoPE row is not at the pair's mean position")
	}
}

// Token reduction: a width-1 grid has nothing to pool (the reference
// path, to rounding); resident and streamed blocks agree; pooling changes
// the output; the early stretch applies to early steps; a pair's rows
// leave the pooled stretch apart (TestTokenReductionOracle checks the
// restore's values).
func TestTokenReduction(t *testing.T) {
	b := cpuBackend(t)
	res := loadTiny(t, b, false, Options{ExactKV: true})
	str := loadTiny(t, b, false, Options{ExactKV: true, Residency: Streamed})
	auditAll(t, res)
	auditAll(t, str)
	cfg := &TokenReductionConfig{Begin: 1, End: 2, EarlySteps: 1, EarlyEnd: 3}

	// width 1: a 32-pixel-wide canvas
	l, err := layout.Build(layout.Spec{Canvas: layout.Canvas{Width: 32, Height: 64}, Frames: 22, PromptTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	run := func(m *Model, l *layout.Layout, step int) []float32 {
		t.Helper()
		s, err := m.SequenceFor(l)
		if err != nil {
			t.Fatal(err)
		}
		ts := Timesteps{Video: 0.3, Audio: 0.6}
		if err := m.PrepareAdaLN([]Timesteps{ts}); err != nil {
			t.Fatal(err)
		}
		c := m.Cfg
		in := Inputs{Text: ramp(s.text*c.Hidden, 1), Video: ramp(s.video*c.VideoPatchDim(), 2), Audio: ramp(s.audio*c.AudioChannels, 3), T: ts, Step: step}
		out, err := m.Forward(s, in)
		if err != nil {
			t.Fatal(err)
		}
		return append(out.Video, out.Audio...)
	}
	plain := run(res, l, 0)
	res.SetTokenReduction(cfg)
	expectClose(t, "width 1", run(res, l, 0), plain, 1e-6)

	l2, err := layout.Build(layout.Spec{Canvas: layout.Canvas{Width: 128, Height: 64}, Frames: 22, PromptTokens: 5})
	if err != nil {
		t.Fatal(err)
	}
	res.SetTokenReduction(nil)
	full := run(res, l2, 0)
	res.SetTokenReduction(cfg)
	if err := str.SetTokenReduction(cfg); err != nil {
		t.Fatal(err)
	}
	early, late := run(res, l2, 0), run(res, l2, 5)
	expectClose(t, "streamed", run(str, l2, 0), early, 1e-5)
	expectClose(t, "streamed late", run(str, l2, 5), late, 1e-5)
	e1, e2 := relL2(early, full), relL2(late, full)
	t.Logf("pooled vs full: early (blocks 1..2) %.3g, late (block 1) %.3g", e1, e2)
	if e1 == 0 || e2 == 0 || e1 > 1 || e2 > 1 || relL2(early, late) == 0 {
		t.Error("token reduction had no effect or an implausible one")
	}
	// The early stretch is restored after the last block, and the heads
	// are row-wise: only the delta restore (original + update) keeps the
	// two rows of a pooled pair apart; a plain copy of the pooled row
	// makes them equal.
	s2, err := res.SequenceFor(l2)
	if err != nil {
		t.Fatal(err)
	}
	if d := minPairGap(early, s2.targetVideo, res.Cfg.VideoPatchDim()); !(d > minPairSpread) {
		t.Errorf("restored pair rows are %.3g apart (relative), want > %g: the delta restore is lost", d, minPairSpread)
	} else {
		t.Logf("restored pair rows: smallest relative gap %.3g", d)
	}
	if err := res.SetTokenReduction(&TokenReductionConfig{Begin: 2, End: 2}); err == nil {
		t.Error("empty block range accepted")
	}
}

// minPairSpread is the least relative gap between the outputs of a pooled
// pair's two rows that the delta restore must leave (a plain restore
// leaves exactly 0).
const minPairSpread = 1e-3

// minPairGap is the smallest |row a − row b| / |row a| over the pooled
// pairs of the target video rows at the start of out (width w per row).
func minPairGap(out []float32, v layout.Segment, w int) float64 {
	gap := math.Inf(1)
	for line := 0; line < v.LatentT*v.GridH; line++ {
		for col := 0; col+1 < v.GridW; col += 2 {
			a := out[(line*v.GridW+col)*w:][:w]
			b := out[(line*v.GridW+col+1)*w:][:w]
			gap = math.Min(gap, relL2(b, a))
		}
	}
	return gap
}

func ramp(n int, k float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(0.5 * (float64((i*7+int(k)*13)%97)/48 - 1))
	}
	return out
}
