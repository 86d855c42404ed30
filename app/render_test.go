package app

import (
	"testing"

	"h3studio/engine"
)

// A prepared job runs only the request it was planned from: a queue that
// handed it another would render the wrong clip without planning it.
func TestPreparedJobRendersItsOwnRequest(t *testing.T) {
	job := &Job{asked: Request{Prompt: "a fox", References: []Reference{{Kind: RefImage, Path: "a.png"}}}}
	calls := 0
	sink := func(engine.Event) { calls++ }
	other := job.asked
	other.References = []Reference{{Kind: RefImage, Path: "b.png"}}
	if _, err := job.Render(t.Context(), other, sink); err == nil || calls != 0 {
		t.Errorf("another request: %v after %d events, want a refusal before any", err, calls)
	}
}
