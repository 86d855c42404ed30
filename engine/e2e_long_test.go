//go:build long

package engine_test

import "testing"

// TestEndToEndParityLong runs the cases whose reference VAE encodes take
// minutes on a CPU: the official default picture sizing (a 2048-pixel short
// edge) with a silent portrait clip and an audio clip, and a 1280x720 clip
// with its soundtrack (both clips on their 768-class canvases).
func TestEndToEndParityLong(t *testing.T) {
	for _, name := range []string{"ref2va_official", "ref2va_clip_sound"} {
		t.Run(name, func(t *testing.T) { runParityCase(t, name) })
	}
}
