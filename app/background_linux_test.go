package app

import (
	"context"
	"errors"
	"runtime"
	"syscall"
	"testing"

	"h3studio/engine"
)

// threadNice is the calling thread's nice value (the raw getpriority
// system call answers 20 - nice).
func threadNice(t *testing.T) int {
	p, err := syscall.Getpriority(syscall.PRIO_PROCESS, syscall.Gettid())
	if err != nil {
		t.Fatal(err)
	}
	return 20 - p
}

// A render wrapped by InBackground runs at backgroundNice, returns what
// the render returned, and leaves the caller's thread as it was.
func TestInBackgroundLowersTheRenderOnly(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := threadNice(t)
	var inside int
	want := errors.New("the render's own error")
	out, err := InBackground(func(ctx context.Context, req Request, sink engine.Sink) (string, error) {
		inside = threadNice(t)
		return req.Output, want
	})(context.Background(), Request{Output: "clip.mp4"}, nil)
	if inside != backgroundNice {
		t.Errorf("the render ran at nice %d, want %d", inside, backgroundNice)
	}
	if out != "clip.mp4" || !errors.Is(err, want) {
		t.Errorf("InBackground returned %q, %v; want the render's clip.mp4, %v", out, err, want)
	}
	if after := threadNice(t); after != before {
		t.Errorf("the caller's thread went from nice %d to %d", before, after)
	}
}
