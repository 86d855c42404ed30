package engine

import (
	"testing"
	"time"
)

func TestPhaseETA(t *testing.T) {
	for _, c := range []struct {
		est, el time.Duration
		done    float64
		want    time.Duration
	}{
		{80 * time.Second, 5 * time.Second, 0, 75 * time.Second}, // nothing done yet: the plan's
		{80 * time.Second, 90 * time.Second, 0, 0},               // past the estimate: unknown
		{80 * time.Second, 10 * time.Second, 0.25, 30 * time.Second},
		{80 * time.Second, 10 * time.Second, 1, 0},
	} {
		if got := phaseETA(c.est, c.done, c.el); got != c.want {
			t.Errorf("phaseETA(%v, %g, %v) = %v, want %v", c.est, c.done, c.el, got, c.want)
		}
	}
}
