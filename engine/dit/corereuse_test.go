package dit

import (
	"testing"

	"h3studio/engine/plan"
)

// Core reuse: with every forward evaluated it is the reference path; a
// reused forward on the inputs the residual was cached from reproduces
// the full forward (embedding + (out − in) = out); on new latents the
// blocks do not run and the result is an approximation of the full one.
func TestCoreReuse(t *testing.T) {
	b := cpuBackend(t)
	for _, res := range []plan.Residency{plan.Resident, plan.Streamed} {
		m := loadTiny(t, b, false, Options{Precision: exactKV, Residency: res})
		_, _, full, _ := runCase(t, m, "t2va")
		if err := m.SetCoreReuse(CoreReuseConfig{Every: 1}); err != nil {
			t.Fatal(err)
		}
		_, _, same, _ := runCase(t, m, "t2va")
		expectClose(t, "every=1", same, full, 0)

		c := openCase(t, "t2va")
		segs, _ := segments(t, "t2va")
		s, _ := m.NewSequence(segs, nil)
		text, _ := c.get(t, "in.text")
		refined, _ := m.EncodeText(text, 7)
		ts := Timesteps{Video: c.meta.TVideo, Audio: c.meta.TAudio}
		if err := m.PrepareAdaLN([]Timesteps{ts}); err != nil {
			t.Fatal(err)
		}
		if err := m.SetCoreReuse(CoreReuseConfig{Every: 3}); err != nil {
			t.Fatal(err)
		}
		video, audio, _, _ := inputs(t, m, c, s)
		in := Inputs{Text: refined, Video: video, Audio: audio, T: ts}
		first, err := m.Forward(s, in) // evaluates, caches the residual
		if err != nil {
			t.Fatal(err)
		}
		var ranBlocks bool
		m.Tap = func(n string, _ []int, _ []float32) { ranBlocks = ranBlocks || n == "blk.0.out" }
		again, err := m.Forward(s, in) // reused
		if err != nil {
			t.Fatal(err)
		}
		if ranBlocks {
			t.Error("blocks ran on a reused forward")
		}
		expectClose(t, "reused, same input", again.Video, first.Video, 1e-6)
		moved := append([]float32(nil), video...)
		for i := range moved {
			moved[i] *= 0.9
		}
		approx, err := m.Forward(s, Inputs{Text: refined, Video: moved, Audio: audio, T: ts})
		if err != nil {
			t.Fatal(err)
		}
		m.Tap = nil
		exact, err := m.Forward(s, Inputs{Text: refined, Video: moved, Audio: audio, T: ts, Final: true}) // last: evaluates
		if err != nil {
			t.Fatal(err)
		}
		e := relL2(approx.Video, exact.Video)
		t.Logf("%v: reused vs evaluated on moved latents: rel L2 %.3g", res, e)
		if e == 0 || e > 0.5 {
			t.Errorf("reused forward differs from the full one by %.3g", e)
		}
		if err := m.SetCoreReuse(CoreReuseConfig{Every: 9}); err == nil {
			t.Error("interval 9 accepted")
		}
		m.SetCoreReuse(CoreReuseConfig{})
	}
}
