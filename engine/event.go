// Package engine is H3 Studio's public engine API: Open a snapshot, Plan a
// request, Generate it with progress events delivered to a sink. It wires
// the planner (layout, plan), the weights, the text encoder, the DiT with
// its sampler, and the VAEs; the app package drives it from a worker
// goroutine and never touches ggml directly.
package engine

import (
	"errors"
	"image"
	"time"
)

// Phase names one stage of a generation, in the order they run. Each phase
// releases its weights before the next one loads.
type Phase string

const (
	PhasePlan       Phase = "plan"       // sequence and memory accounting
	PhaseLoad       Phase = "load"       // opening weights per the plan's residency
	PhaseReferences Phase = "references" // decoding reference media
	PhaseEncode     Phase = "encode"     // Qwen3-VL text + vision encoding
	PhaseDenoise    Phase = "denoise"    // DiT steps
	PhaseDecode     Phase = "decode"     // video and audio VAE decode
	PhaseMux        Phase = "mux"        // MP4 encode
	PhaseDone       Phase = "done"
)

// Event is one progress report. Step and Total count within the phase
// (denoise steps, VAE tiles); Total is 0 when the phase has no steps.
type Event struct {
	Phase   Phase
	Step    int
	Total   int
	Message string
	// Preview is a small decoded frame of the current denoise state, when
	// the caller asked for previews; nil otherwise.
	Preview image.Image
	// Elapsed is the time spent in this phase so far.
	Elapsed time.Duration
}

// Sink receives events on the generating goroutine; it must not block for
// long (the UI copies what it needs and hands off through fyne.Do).
type Sink func(Event)

// ErrCanceled is returned by Generate when its context is canceled; the
// output path is left untouched.
var ErrCanceled = errors.New("engine: canceled")
