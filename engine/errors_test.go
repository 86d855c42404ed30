package engine

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"h3studio/engine/ggml"
)

// TestPhaseKeepsOutOfMemory: a backend allocation that fails inside a
// phase reaches Generate's caller as ErrOutOfMemory, not as a cancellation
// or a bare string.
func TestPhaseKeepsOutOfMemory(t *testing.T) {
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ws := b.NewWeightSet(1)
	defer ws.Free()
	ws.Add("huge", ggml.F32, 1<<20, 1<<20, 1<<12) // 16 PiB: refused at once
	g := &generation{e: &Engine{log: slog.New(slog.NewTextHandler(io.Discard, nil))}, sink: func(Event) {}}
	err = g.phase(context.Background(), PhaseLoad, func(context.Context) error { return ws.Alloc() })
	if !errors.Is(err, ErrOutOfMemory) || errors.Is(err, ErrCanceled) {
		t.Fatalf("phase error %v: want ErrOutOfMemory", err)
	}
	t.Log(err)
}
