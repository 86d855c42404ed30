package ui

import (
	"testing"
	"time"
)

// An executor that runs updates inline (Fyne's Do does so before the app
// runs and while it drains at shutdown) must get every update delivered:
// the coalescer may not call Do while it holds its own lock.
func TestCoalescerInlineExecutor(t *testing.T) {
	c := newCoalescer(func(f func()) { f() })
	ran := make(chan string, 2)
	posted := make(chan struct{})
	go func() {
		defer close(posted)
		// The first update flushes at once, inline; the second waits for
		// the next frame on a timer, whose Do also runs inline.
		c.post(func() { ran <- "status" })
		c.replace("progress", func() { ran <- "progress" })
	}()
	timeout := time.After(5 * time.Second)
	select {
	case <-posted:
	case <-timeout:
		t.Fatal("post with an inline executor did not return: the coalescer called Do holding its lock")
	}
	for _, want := range []string{"status", "progress"} {
		select {
		case got := <-ran:
			if got != want {
				t.Errorf("update %q ran, want %q", got, want)
			}
		case <-timeout:
			t.Fatalf("update %q never ran", want)
		}
	}
}
