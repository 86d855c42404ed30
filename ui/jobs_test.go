package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"

	"h3studio/app"
)

// rowThumb is the thumbnail of a queue or history row (nil: none drawn).
func rowThumb(o fyne.CanvasObject) *canvas.Image {
	if img, ok := o.(*canvas.Image); ok {
		return img
	}
	if c, ok := o.(*fyne.Container); ok {
		for _, k := range c.Objects {
			if img := rowThumb(k); img != nil {
				return img
			}
		}
	}
	return nil
}

// Two renders that differ only in their seed: their queue rows and their
// history rows tell them apart (mode, canvas and length, seed, state with
// the time taken) and show a picture of the clip; Clear finished empties
// the queue and leaves the history. A new user saw every row read "A red
// fox runs… — done".
func TestQueueAndHistoryRowsTellJobsApart(t *testing.T) {
	h := newHarness(t)
	h.run(func() {
		h.s.ed.prompt.SetText("a red fox runs through fresh snow at dawn, steam rising")
		h.s.ed.width.SetText("64")
		h.s.ed.height.SetText("64")
		h.s.ed.unit.SetSelected(unitFrames)
		h.s.ed.length.SetText("22")
		h.s.ed.preset.SetSelected("Fast")
		h.s.ed.seed.SetText("11")
	})
	h.waitSettled()
	h.run(func() { test.Tap(h.s.renderBtn) })
	h.run(func() { h.s.ed.seed.SetText("12") })
	h.waitSettled()
	h.run(func() { test.Tap(h.s.renderBtn) })
	// The rows follow the queue's events on the UI goroutine, a moment
	// after the jobs' status changes: wait for what the user sees.
	h.waitFor("both renders shown done", 120*time.Second, func() bool {
		jobs := h.s.queue.Jobs()
		if len(jobs) != 2 || jobs[0].Status != app.StatusDone || jobs[1].Status != app.StatusDone || len(h.s.queueBox.Objects) < 2 {
			return false
		}
		for _, row := range h.s.queueBox.Objects[:2] {
			if !strings.Contains(strings.Join(labels(row), " "), "done in ") {
				return false
			}
		}
		return true
	})
	h.run(func() {
		for i, seed := range []string{"seed 11", "seed 12"} {
			row := h.s.queueBox.Objects[i]
			text := strings.Join(labels(row), " ")
			for _, want := range []string{"a red fox", seed + " · 64x64, 0.92 s · text only", "done in "} {
				if !strings.Contains(text, want) {
					t.Errorf("queue row %d %q lacks %q", i, text, want)
				}
			}
			if img := rowThumb(row); img == nil || img.Image == nil {
				t.Errorf("queue row %d has no thumbnail", i)
			}
		}
		if h.s.clearDone.Disabled() {
			t.Fatal("Clear finished is disabled with two finished jobs")
		}
		test.Tap(h.s.clearDone)
		if n := len(h.s.queue.Jobs()); n != 0 || !h.s.clearDone.Disabled() || labels(h.s.queueBox)[0] != "No renders yet." {
			t.Errorf("after Clear finished: %d jobs, rows %q", n, labels(h.s.queueBox))
		}
	})
	h.waitFor("two history rows with pictures", 30*time.Second, func() bool {
		n := 0
		for _, row := range h.s.histBox.Objects {
			if img := rowThumb(row); img != nil && img.Image != nil {
				n++
			}
		}
		return n == 2
	})
	h.run(func() {
		text := strings.Join(labels(h.s.histBox), " ")
		for _, want := range []string{"seed 11", "seed 12", "done in "} {
			if !strings.Contains(text, want) {
				t.Errorf("history %q lacks %q", text, want)
			}
		}
		for i, row := range h.s.histBox.Objects {
			if n := len(buttons(row)); n != 2 {
				t.Errorf("history row %d has %d buttons, want Reuse and play", i, n)
			}
		}
	})
}
