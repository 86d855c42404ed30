package app

import (
	"strings"
	"testing"
	"time"

	"h3studio/engine"
	"h3studio/engine/plan"
)

func TestDurationText(t *testing.T) {
	for _, c := range []struct {
		s    float64
		want string
	}{
		{0, "0.0 s"},
		{0.34, "0.3 s"},
		{9.94, "9.9 s"},
		{10, "10 s"},
		{59.4, "59 s"},
		{60, "1 min"},
		{170, "3 min"},
		{3599, "60 min"},
		{3600, "1.0 h"},
		{5400, "1.5 h"},
	} {
		if got := DurationText(c.s); got != c.want {
			t.Errorf("DurationText(%v) = %q, want %q", c.s, got, c.want)
		}
	}
}

// A tiny model's estimate from the chip's peak speed is milliseconds: it
// reads "under 0.1 s", never "about 0.0 s".
func TestEstimateTextOfAnInstantRender(t *testing.T) {
	e := plan.Estimate{Seconds: 0.04, Source: plan.SourcePeak,
		Phases: []plan.PhaseCost{{Phase: string(engine.PhaseDenoise), Seconds: 0.01}, {Phase: string(engine.PhaseDecode), Seconds: 0.03}}}
	got := EstimateText(e)
	want := "under 0.1 s: denoising under 0.1 s, decoding under 0.1 s (from the chip's peak speed, not yet measured)"
	if got != want {
		t.Errorf("EstimateText = %q, want %q", got, want)
	}
}

func TestFLOPText(t *testing.T) {
	for tflop, want := range map[float64]string{0: "0.0 TFLOP", 0.00034: "0.3 GFLOP", 0.0995: "99.5 GFLOP", 0.1: "0.1 TFLOP", 412.6: "412.6 TFLOP"} {
		if got := FLOPText(tflop); got != want {
			t.Errorf("FLOPText(%v) = %q, want %q", tflop, got, want)
		}
	}
}

func TestGBText(t *testing.T) {
	for _, c := range []struct {
		b    int64
		want string
	}{
		{0, "0.0 GB"},
		{1 << 30, "1.0 GB"},
		{1 << 30 / 20, "0.05 GB"},
		{300 << 20, "0.29 GB"},
		{1387601240, "1.3 GB"},
		{128 << 30, "128.0 GB"},
	} {
		if got := GBText(c.b); got != c.want {
			t.Errorf("GBText(%d) = %q, want %q", c.b, got, c.want)
		}
	}
}

func TestStatsText(t *testing.T) {
	if got := StatsText(nil); got != "" {
		t.Errorf("no stats: %q", got)
	}
	if got, want := StatsText(&engine.Stats{Total: 2340 * time.Millisecond}), "2.3 s"; got != want {
		t.Errorf("no peak: %q, want %q", got, want)
	}
	if got, want := StatsText(&engine.Stats{Total: 75 * time.Second, PeakBytes: 3 << 29}), "1 min, peak memory 1.5 GB"; got != want {
		t.Errorf("with peak: %q, want %q", got, want)
	}
}

func TestTimecodeText(t *testing.T) {
	for _, c := range []struct {
		i, n int
		fps  float64
		want string
	}{
		{0, 22, 24, "00:00:00:00  frame 1/22"},
		{21, 22, 24, "00:00:00:21  frame 22/22"},
		{24, 48, 24, "00:00:01:00  frame 25/48"},
		{47, 48, 24, "00:00:01:23  frame 48/48"},
		{24*61 + 5, 2000, 24, "00:01:01:05  frame 1470/2000"},
		{24*3600 + 24*62 + 3, 100000, 24, "01:01:02:03  frame 87892/100000"},
		{30, 60, 29.97, "00:00:01:00  frame 31/60"},
		{25, 30, 0, "00:00:01:01  frame 26/30"},
		{0, 0, 24, "00:00:00:00"},
	} {
		if got := TimecodeText(c.i, c.n, c.fps); got != c.want {
			t.Errorf("TimecodeText(%d, %d, %v) = %q, want %q", c.i, c.n, c.fps, got, c.want)
		}
	}
}

func TestLoopAndShuttleText(t *testing.T) {
	if got, want := LoopText(10, 30), "in 11 · out 31"; got != want {
		t.Errorf("LoopText = %q, want %q", got, want)
	}
	for speed, want := range map[int]string{0: "", 1: "1×", 8: "8×", -1: "−1×", -4: "−4×"} {
		if got := ShuttleText(speed); got != want {
			t.Errorf("ShuttleText(%d) = %q, want %q", speed, got, want)
		}
	}
}

func TestTokensTextAgrees(t *testing.T) {
	if got := TokensText(plan.TextTokens{Total: 1, Prompt: 1}); !strings.HasPrefix(got, "Text encoder: 1 token —") {
		t.Errorf("one token: %q", got)
	}
	if got := TokensText(plan.TextTokens{Total: 9, Prompt: 9, Estimated: true}); !strings.HasPrefix(got, "Text encoder: 9 tokens — prompt 9 (estimated)") {
		t.Errorf("nine tokens: %q", got)
	}
}

// Counts read as words: the noun agrees with the number, and a rounded
// length says why it was rounded.
func TestCountsAndLengthInWords(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{ReadingText(1), "Reading 1 file…"},
		{ReadingText(3), "Reading 3 files…"},
		{RestoringText(1), "Restoring the settings; reading 1 reference…"},
		{LengthText(22), "→ 22 frames = 0.92 s at 24 fps"},
		{LengthText(23), "→ 39 frames = 1.62 s at 24 fps, rounded up: " + FramesRuleText},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
