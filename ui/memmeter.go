package ui

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
)

// memMeterPeriod is how often the meter reads memory during a render:
// four times a second follows a phase loading gigabytes without the
// reading costing anything the render would feel.
const memMeterPeriod = 250 * time.Millisecond

// memMeter shows, by the progress while a render runs, the memory the
// render holds (beyond what the process held when it started) against the
// plan's predicted peak. Reads happen on a goroutine of
// their own; the text is set on the UI goroutine.
type memMeter struct {
	label *widget.Label
	// read is Config.Memory; nil hides the meter for good.
	read func() app.MemoryUse
	// relayout lays out what holds the meter after it shows or hides.
	relayout func()
	// UI-goroutine state: the running render's predicted peak and the
	// channel that stops its reader (nil when none runs).
	planned int64
	stop    chan struct{}
}

func newMemMeter(read func() app.MemoryUse) *memMeter {
	m := &memMeter{label: widget.NewLabel(""), read: read}
	// Under the progress bar's end, where the ETA is.
	m.label.Alignment = fyne.TextAlignTrailing
	m.label.Hide()
	return m
}

// start begins reading for a render that just started; spawn runs the
// reader (Studio.spawn, so Close waits for it), post hands its readings
// to the UI goroutine, done ends it with the window.
func (m *memMeter) start(spawn func(func()), post func(func()), done <-chan struct{}) {
	if m.read == nil || m.stop != nil {
		return
	}
	m.planned = 0
	m.label.SetText("")
	m.label.Show()
	m.resized()
	stop := make(chan struct{})
	m.stop = stop
	read := m.read
	spawn(func() {
		tick := time.NewTicker(memMeterPeriod)
		defer tick.Stop()
		// The render's own memory is what it adds to what the process
		// held when it started: the window, the runtime and the app's
		// caches (some 0.15 GB) are outside the plan, which budgets them
		// as its reserve, so the whole resident set read 0.21 GB "of
		// 0.09 GB planned" for a render that kept to its plan.
		base := read()
		for {
			u := read()
			u.Resident, u.Device = max(0, u.Resident-base.Resident), max(0, u.Device-base.Device)
			post(func() {
				if m.stop == stop {
					m.label.SetText(app.MemoryText(u, m.planned))
				}
			})
			select {
			case <-tick.C:
			case <-stop:
				return
			case <-done:
				return
			}
		}
	})
}

// plan sets the running render's predicted peak.
func (m *memMeter) plan(peak int64) { m.planned = peak }

// end stops the reader and hides the meter: the finished render's summary
// says its peak.
func (m *memMeter) end() {
	if m.stop == nil {
		return
	}
	close(m.stop)
	m.stop = nil
	m.label.Hide()
	m.resized()
}

func (m *memMeter) resized() {
	if m.relayout != nil {
		m.relayout()
	}
}
