package engine_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// parityCases are the fixture cases TestEndToEndParity runs; the ones whose
// reference VAE encodes take minutes on a CPU (official 2048-pixel picture
// sizing, clips on their 768-class canvases) run under -tags long.
var parityCases = []string{"t2va", "fl2va_first_last", "fl2va_last", "ref2va_mixed"}

// compareParity checks every tapped stage against the reference and logs
// the measured error of each; stepTolerance bounds the sampler's latents
// (every step's and the final ones).
func compareParity(t *testing.T, fx *fixture, cp *capture, stepTolerance float64) {
	t.Helper()
	for _, name := range []string{"qwen.ids", "qwen.tags", "qwen.positions"} {
		got, want := cp.ints[name], fx.ints(t, name)
		if !slices.Equal(got, want) {
			t.Errorf("%s differ from the official presentation: %s", name, firstDiff(got, want))
		} else {
			t.Logf("%-16s exact (%d)", name, len(want))
		}
	}
	taps := []string{"qwen.hidden"}
	for _, c := range []string{"cond.video_rows", "cond.audio_rows"} {
		if fx.has(c) {
			taps = append(taps, c)
		}
	}
	if fx.has("cond.video_rows.every4") { // a large set keeps every 4th row of 96 values
		var sub []float32
		rows := cp.floats["cond.video_rows"]
		for r := 0; r*96 < len(rows); r += 4 {
			sub = append(sub, rows[r*96:(r+1)*96]...)
		}
		checkClose(t, "cond.video_rows/4", sub, fx.floats(t, "cond.video_rows.every4"), latentTolerance)
	}
	for _, name := range taps {
		checkClose(t, name, cp.floats[name], fx.floats(t, fixtureName(name)), latentTolerance)
	}
	var steps []string
	for k := 0; k < fx.spec.Steps; k++ {
		steps = append(steps, fmt.Sprintf("step.video.%d", k), fmt.Sprintf("step.audio.%d", k))
	}
	for _, name := range append(steps, "final.video", "final.audio") {
		checkClose(t, name, cp.floats[name], fx.floats(t, fixtureName(name)), stepTolerance)
	}
	switch {
	case fx.has("decode.frames"):
		compareFrames(t, fx, cp, "decode.frames", 1)
	case fx.has("decode.frames.every4"):
		compareFrames(t, fx, cp, "decode.frames.every4", 4)
	}
	checkClose(t, "decode.audio", cp.floats["decode.audio"], fx.floats(t, "decode.audio"), decodeTolerance)
}

// compareFrames checks the decoded float frames (the reference is
// [3][F][H][W] of every stride-th frame, the engine hands [3][H][W] per
// frame), by relative L2 and PSNR.
func compareFrames(t *testing.T, fx *fixture, cp *capture, name string, stride int) {
	t.Helper()
	frames := fx.floats(t, name)
	n := 0
	for ; cp.floats[fmt.Sprintf("decode.frame.%d", n)] != nil; n++ {
	}
	kept := (n + stride - 1) / stride
	if n == 0 || len(frames)%kept != 0 {
		t.Fatalf("decoded %d frames; the reference has %d values for %d of them", n, len(frames), kept)
	}
	plane := len(frames) / kept / 3
	var got, want []float32
	for k := 0; k < kept; k++ {
		got = append(got, cp.floats[fmt.Sprintf("decode.frame.%d", k*stride)]...)
		for ch := 0; ch < 3; ch++ {
			want = append(want, frames[(ch*kept+k)*plane:(ch*kept+k+1)*plane]...)
		}
	}
	checkClose(t, name, got, want, decodeTolerance)
	var se float64
	for i := range want {
		d := float64(got[i] - want[i])
		se += d * d
	}
	t.Logf("%-16s PSNR %.1f dB", name, 10*math.Log10(float64(len(want))/math.Max(se, 1e-30)))
}

// fixtureName maps a tap name to the generator's tensor name.
func fixtureName(tap string) string {
	for _, s := range []string{"video", "audio"} {
		if p := "step." + s + "."; strings.HasPrefix(tap, p) {
			return "step." + strings.TrimPrefix(tap, p) + "." + s
		}
	}
	return tap
}

func checkClose(t *testing.T, name string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, the reference has %d", name, len(got), len(want))
		return
	}
	e := relL2(got, want)
	t.Logf("%-16s rel L2 %.2e (%d values)", name, e, len(want))
	if !(e <= tol) {
		t.Errorf("%s: rel L2 %.3e > %.0e", name, e, tol)
	}
}

func firstDiff(got, want []int32) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("first at %d: %d, want %d (lengths %d, %d)", i, got[i], want[i], len(got), len(want))
		}
	}
	return fmt.Sprintf("lengths %d, want %d", len(got), len(want))
}
