package app

import (
	"fmt"
	"strings"
	"time"

	"h3studio/engine/layout"
)

// The queue's and the history's rows, in words: a new user found every
// row read "A red fox runs… — done", so a row says what sets its job
// apart from the next.

// JobTitle is a row's first line: the prompt's start, on one line.
func JobTitle(prompt string, n int) string {
	p := strings.Join(strings.Fields(prompt), " ")
	if p == "" {
		return "(no prompt)"
	}
	if r := []rune(p); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return p
}

// JobDetails is what the job makes: its seed first (what most often sets
// two rows apart, and kept when a narrow panel cuts the line), the canvas
// and length as the model makes it, and the mode
// ("seed 42 · 512x512, 0.92 s · 3 references").
func JobDetails(r Request) string {
	d := r.WithDefaults()
	mode := "text only"
	switch {
	case d.FirstFrame != "" || d.LastFrame != "":
		mode = "first & last frame"
	case len(d.References) > 0:
		mode = countText(len(d.References), "reference")
	}
	frames := layout.AlignFrames(d.RequestedFrames())
	return fmt.Sprintf("seed %d · %dx%d, %.2f s · %s", d.Seed, d.Width, d.Height, float64(frames)/layout.FPS, mode)
}

// JobStateText is where a job stands, with how long it ran once it ended
// ("done in 4.2 s", "failed after 1.0 s"); started and finished are zero
// until then.
func JobStateText(s JobStatus, started, finished time.Time) string {
	took := ""
	if !started.IsZero() && finished.After(started) {
		took = DurationText(finished.Sub(started).Seconds())
	}
	switch {
	case s == StatusRunning:
		return "rendering"
	case took == "":
		return string(s)
	case s == StatusDone:
		return "done in " + took
	}
	return string(s) + " after " + took
}

// JobWhen is when a history entry was made, short enough for one line.
func JobWhen(t time.Time) string { return t.Local().Format("Jan 2, 15:04") }
