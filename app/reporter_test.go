package app

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"h3studio/engine"
)

type brokenPipe struct{}

func (brokenPipe) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// `render --progress json` writes one event per line, and a stream that
// cannot be written is reported rather than silently losing events.
func TestReporterJSONLinesAndWriteError(t *testing.T) {
	var out bytes.Buffer
	rp := newReporter("json", &out, io.Discard)
	rp.event("j1", engine.Event{Phase: engine.PhaseDenoise, Step: 3, Total: 20})
	rp.event("j1", engine.Event{Kind: engine.EventEnd, Phase: engine.PhaseDenoise})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"kind":"progress"`) || !strings.Contains(lines[0], `"step":3`) {
		t.Fatalf("events:\n%s", out.String())
	}
	if err := rp.writeErr(); err != nil {
		t.Fatalf("write error on a working stream: %v", err)
	}
	bad := newReporter("json", brokenPipe{}, io.Discard)
	bad.event("j1", engine.Event{Phase: engine.PhaseDenoise, Step: 1, Total: 2})
	if err := bad.writeErr(); err == nil || !strings.Contains(err.Error(), "writing progress") {
		t.Fatalf("broken stream: %v", err)
	}
}
