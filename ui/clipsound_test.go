package ui

import (
	"context"
	"testing"
	"time"
)

// Opening a finished clip attaches its soundtrack to the timeline through
// Config.LoadSound (the production wiring), whether or not this machine
// has an audio device: without one the Sound plays nothing and the
// timeline says so.
func TestOpenClipAttachesSound(t *testing.T) {
	path, _ := encodeClip(t, 24, 64, 48, sine(1))
	h := newHarness(t)
	loaded := make(chan string, 1)
	h.run(func() {
		h.s.cfg.LoadSound = func(ctx context.Context, p string) (*Sound, error) {
			loaded <- p
			return LoadSound(ctx, p)
		}
	})
	h.run(func() { h.s.openClip(path) })
	select {
	case p := <-loaded:
		if p != path {
			t.Fatalf("sound loaded from %s, want %s", p, path)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the clip's sound was never loaded")
	}
	h.waitFor("the sound on the timeline", 30*time.Second, func() bool { return h.s.timeline.sound != nil })
	var silent bool
	h.run(func() { silent = h.s.timeline.sound.reader == nil })
	if silent {
		t.Fatal("a clip with a soundtrack got a silent Sound")
	}
}
