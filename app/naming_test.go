package app

import (
	"path/filepath"
	"testing"
	"time"
)

func TestOutputPath(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.Local)
	if got, want := OutputPath("/clips", 42, at), filepath.Join("/clips", "h3studio-20260304-050607.890-seed42.mp4"); got != want {
		t.Errorf("OutputPath = %q, want %q", got, want)
	}
	// Renders a millisecond apart get different files, in time order.
	a, b := OutputPath("/clips", 1, at), OutputPath("/clips", 1, at.Add(time.Millisecond))
	if a >= b {
		t.Errorf("%q does not sort before %q", a, b)
	}
}
