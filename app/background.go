package app

import (
	"context"
	"runtime"

	"h3studio/engine"
)

// backgroundNice is the CPU priority renders run at under a window: ten
// steps below it, the kernel gives the window's thread about nine times
// the render's share of a core when both want one, so a key typed during
// a render is drawn at once, while an idle window leaves the render every
// cycle.
const backgroundNice = 10

// InBackground runs render on an OS thread of its own at a lower CPU
// priority than the window's (Linux; elsewhere it runs as given). The
// engine's compute threads and the FFmpeg it starts inherit the priority
// from that thread: on two cores a render at the window's priority kept
// a typed key off the screen for 80-120 ms.
func InBackground(render RenderFunc) RenderFunc {
	return func(ctx context.Context, req Request, sink engine.Sink) (string, error) {
		type result struct {
			out string
			err error
		}
		done := make(chan result, 1)
		go func() {
			// Never unlocked: the thread, and its priority, end with the
			// goroutine instead of going back to the scheduler's pool.
			runtime.LockOSThread()
			lowerThreadPriority(backgroundNice)
			out, err := render(ctx, req, sink)
			done <- result{out, err}
		}()
		r := <-done
		return r.out, r.err
	}
}
