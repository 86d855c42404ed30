package app

import (
	"testing"
	"time"
)

// Rows of two jobs that differ in one setting read differently, and a
// finished job says how long it ran.
func TestJobRowsInWords(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 8, 18, 0, 0, time.UTC)
	for _, c := range []struct{ got, want string }{
		{JobDetails(Request{Seed: 7}), "seed 7 · 512x512, 0.92 s · text only"},
		{JobDetails(Request{Width: 768, Height: 432, Seconds: 2, Seed: 8, References: []Reference{{Kind: RefImage, Path: "a.png"}, {Kind: RefAudio, Path: "b.wav"}}}),
			"seed 8 · 768x432, 2.33 s · 2 references"},
		{JobDetails(Request{Width: 64, Height: 64, Frames: 39, LastFrame: "end.png"}), "seed 0 · 64x64, 1.62 s · first & last frame"},
		{JobTitle("  a red fox\truns\nthrough snow ", 12), "a red fox r…"},
		{JobTitle(" ", 12), "(no prompt)"},
		{JobStateText(StatusQueued, time.Time{}, time.Time{}), "queued"},
		{JobStateText(StatusRunning, t0, time.Time{}), "rendering"},
		{JobStateText(StatusDone, t0, t0.Add(112*time.Second)), "done in 2 min"},
		{JobStateText(StatusFailed, t0, t0.Add(4200*time.Millisecond)), "failed after 4.2 s"},
		{JobStateText(StatusCanceled, time.Time{}, t0), "canceled"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
