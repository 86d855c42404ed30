//go:build cgo

package ggml

import (
	"log/slog"
	"os"
)

// ggml's scheduler prints its graph splits and each node's backend when
// GGML_SCHED_DEBUG is set, at ggml's debug log level; the sink the
// ollama module installs prints only what slog's default logger enables
// (info and above). With the variable set, let the debug lines through:
// that dump is how a device's split inputs are told apart from the host's.
func init() {
	if os.Getenv("GGML_SCHED_DEBUG") != "" {
		slog.SetLogLoggerLevel(slog.LevelDebug)
	}
}
