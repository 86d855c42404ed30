package app

import (
	"log/slog"
	"syscall"
)

// lowerThreadPriority sets the calling thread's nice value: on Linux the
// priority is per thread, and threads it creates start with it.
func lowerThreadPriority(nice int) {
	if err := syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), nice); err != nil {
		slog.Warn("render priority unchanged", "err", err)
	}
}
