package ui

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"h3studio/app"
)

// While a render runs, the meter beside the progress reads the process's
// memory (a few times a second, never faster than memMeterPeriod) and
// shows it against the plan's predicted peak; when the render ends the
// reading stops and the meter goes.
func TestMemoryMeterDuringRender(t *testing.T) {
	h := newHarness(t)
	h.small("Fast")
	var reads atomic.Int64
	var want string
	h.run(func() {
		real := h.s.meter.read
		h.s.meter.read = func() app.MemoryUse { reads.Add(1); return real() }
		if h.s.meter.label.Visible() {
			t.Error("the meter shows before any render")
		}
		req, err := h.s.Request()
		if err != nil {
			t.Fatal(err)
		}
		p, err := h.rd.Plan(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		want = " of " + app.GBText(p.Memory.PeakBytes) + " planned"
		test.Tap(h.s.renderBtn)
	})
	t0 := time.Now()
	var shown string
	h.waitFor("the memory meter", 60*time.Second, func() bool {
		shown = h.s.meter.label.Text
		return h.s.running != "" && h.s.meter.label.Visible() && strings.HasSuffix(shown, want) && !strings.HasPrefix(shown, "0.00 GB")
	})
	t.Logf("meter during the render: %q", shown)
	h.run(func() {
		// Shown means laid out: a line of its own in the controls, as
		// wide as they are and under the progress bar.
		lbl, bar := h.s.meter.label, h.s.progress
		d := fyne.CurrentApp().Driver()
		lp, bp := d.AbsolutePositionForObject(lbl), d.AbsolutePositionForObject(bar)
		if lbl.Size().Width < lbl.MinSize().Width || lbl.Size().Height < lbl.MinSize().Height || lp.Y < bp.Y+bar.Size().Height || lp.X+lbl.Size().Width < bp.X+bar.Size().Width {
			t.Errorf("meter at %v size %v, progress at %v size %v: not laid out under the bar", lp, lbl.Size(), bp, bar.Size())
		}
	})
	if strings.HasPrefix(shown, "0.00 GB") {
		t.Errorf("meter %q: no resident memory read", shown)
	}
	h.waitFor("the render to finish", 90*time.Second, func() bool { return h.s.timeline.Store() != nil })
	elapsed := time.Since(t0)
	n := reads.Load()
	h.run(func() {
		if h.s.meter.label.Visible() {
			t.Error("the meter still shows after the render")
		}
	})
	t.Logf("%d readings in %v", n, elapsed.Round(time.Millisecond))
	if limit := int64(elapsed/memMeterPeriod) + 2; n < 2 || n > limit {
		t.Errorf("%d readings in %v, want 2..%d", n, elapsed, limit)
	}
	time.Sleep(3 * memMeterPeriod)
	if after := reads.Load(); after != n {
		t.Errorf("%d more readings after the render ended", after-n)
	}
}

// The meter shows what the render adds to the process's memory, not the
// window's own share: a render that grows the process from 100 MB to
// 160 MB reads "0.06 GB of ... planned".
func TestMemoryMeterShowsTheRendersShare(t *testing.T) {
	var n atomic.Int64
	read := func() app.MemoryUse {
		if n.Add(1) == 1 {
			return app.MemoryUse{Resident: 100e6}
		}
		return app.MemoryUse{Resident: 160e6}
	}
	m := newMemMeter(read)
	posts := make(chan func(), 8) // run here, as the UI goroutine would
	done := make(chan struct{})
	defer close(done)
	m.start(func(f func()) { go f() }, func(f func()) { posts <- f }, done)
	m.plan(100e6)
	select {
	case f := <-posts:
		f()
	case <-time.After(5 * time.Second):
		t.Fatal("no reading")
	}
	if want := "0.06 GB of 0.09 GB planned"; m.label.Text != want {
		t.Errorf("meter %q, want %q", m.label.Text, want)
	}
}
