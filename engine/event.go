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

	"h3studio/engine/plan"
)

// Phase names one stage of a generation, in the order they run. Each phase
// releases its weights before the next one loads.
type Phase string

const (
	PhasePlan       Phase = "plan"       // sequence and memory accounting
	PhaseLoad       Phase = "load"       // opening weights per the plan's residency
	PhasePreview    Phase = "preview"    // fitting the step preview to the VAE (FitPreview; once per VAE, before the render)
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
	Kind    EventKind
	Phase   Phase
	Step    int
	Total   int
	Message string
	// Preview is a small decoded frame of the current denoise state, when
	// the caller asked for previews; nil otherwise.
	Preview image.Image
	// Elapsed is the time spent in this phase so far (the phase's whole
	// wall time on EventEnd).
	Elapsed time.Duration
	// ETA estimates the time left in the phase from the steps done so far;
	// 0 when unknown.
	ETA time.Duration
	// Stats is set on EventDone.
	Stats *Stats
	// Plan is set on the EventEnd of PhasePlan: the plan the run executes,
	// so the job history can keep it beside the request.
	Plan *plan.Plan
}

// EventKind says what an Event reports. The zero value is a progress report,
// so events built without a kind keep their old meaning.
type EventKind string

const (
	EventProgress EventKind = ""         // step Step of Total within Phase
	EventStart    EventKind = "start"    // Phase begins
	EventEnd      EventKind = "end"      // Phase finished; Elapsed is its wall time
	EventDecision EventKind = "decision" // the planner changed the request to fit; Message says what and why
	EventWarning  EventKind = "warning"  // something the user should know; the run goes on
	EventDone     EventKind = "done"     // the generation finished; Stats is set
)

// Stats summarises a finished generation (h3's --profile fields).
type Stats struct {
	// Phases lists every phase that ran, in order, with its wall time.
	Phases []PhaseTime   `json:"phases"`
	Total  time.Duration `json:"total_ns"`
	// PeakBytes is the process's peak resident memory (host and, on Apple
	// silicon, unified GPU memory); 0 when the OS does not say.
	PeakBytes int64 `json:"peak_bytes"`
	// Rows is the DiT sequence length; TextTokens the Qwen sequence.
	Rows       int `json:"rows"`
	TextTokens int `json:"text_tokens"`
	Frames     int `json:"frames"`
	// Forwards counts DiT evaluations (fewer than steps with reuse).
	Forwards int `json:"forwards"`
	// Parts splits phases into their stages ("video-vae-encode",
	// "audio-vae-decode", ...), for profiling.
	Parts []PhaseTime `json:"parts,omitempty"`
	// Cached lists what came from the engine's cache instead of being
	// recomputed ("text", "reference 2", ...).
	Cached []string `json:"cached,omitempty"`
}

// PhaseTime is one phase's wall time.
type PhaseTime struct {
	Phase   Phase         `json:"phase"` // a Phase, or a part's name in Stats.Parts
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Sink receives events on the generating goroutine; it must not block for
// long (the UI copies what it needs and hands off through fyne.Do).
type Sink func(Event)

// ErrCanceled is returned by Generate when its context is canceled; the
// output path is left untouched.
var ErrCanceled = errors.New("engine: canceled")
