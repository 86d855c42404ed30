package download

import (
	"sync"
	"time"
)

// Progress is the state of a download, delivered to Fetch's callback a
// few times a second and once at the end.
type Progress struct {
	Files, FilesDone int
	// Total is the size of the snapshot; Done counts what is on disk,
	// including files that were already complete and resumed bytes.
	Total, Done int64
	// Rate is bytes per second transferred over the last few seconds.
	Rate float64
	// ETA is the time left at Rate (0: unknown or finished).
	ETA time.Duration
	// Final marks the last event of the run.
	Final bool
}

// rateWindow is how far back Rate looks: long enough to smooth a bursty
// home connection, short enough to follow a change within seconds.
const rateWindow = 5 * time.Second

// meter counts bytes from the transfer goroutines and turns them into
// Progress events.
type meter struct {
	mu        sync.Mutex
	p         Progress
	moved     int64 // bytes transferred in this run (not resumed ones)
	samples   []sample
	startedAt time.Time
}

type sample struct {
	at    time.Time
	moved int64
}

func newMeter(files int, total, done int64) *meter {
	return &meter{p: Progress{Files: files, Total: total, Done: done}, startedAt: time.Now()}
}

// add counts n bytes written; n < 0 takes back bytes a restarted transfer
// throws away.
func (m *meter) add(n int64) {
	m.mu.Lock()
	m.p.Done += n
	if n > 0 {
		m.moved += n
	}
	m.mu.Unlock()
}

func (m *meter) fileDone() {
	m.mu.Lock()
	m.p.FilesDone++
	m.mu.Unlock()
}

// snapshot returns the current progress with its rate and ETA.
func (m *meter) snapshot(now time.Time) Progress {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.samples = append(m.samples, sample{now, m.moved})
	for len(m.samples) > 2 && now.Sub(m.samples[1].at) >= rateWindow {
		m.samples = m.samples[1:]
	}
	p := m.p
	first := m.samples[0]
	if dt := now.Sub(first.at).Seconds(); dt > 0 {
		p.Rate = float64(m.moved-first.moved) / dt
	}
	if p.Rate > 0 && p.Total > p.Done {
		p.ETA = time.Duration(float64(p.Total-p.Done) / p.Rate * float64(time.Second))
	}
	return p
}

// average is the mean rate since the run began.
func (m *meter) average(now time.Time) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if dt := now.Sub(m.startedAt).Seconds(); dt > 0 {
		return float64(m.moved) / dt
	}
	return 0
}
