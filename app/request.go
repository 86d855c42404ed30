package app

import (
	"errors"
	"fmt"
	"math"

	"h3studio/engine/layout"
)

// Reference kinds, as the request lists them.
const (
	RefImage      = "image"
	RefVideo      = "video"       // a clip used without its sound
	RefVideoAudio = "video+audio" // a clip with its own or a replacement soundtrack
	RefAudio      = "audio"
)

// Reference is one ordered Ref2VA reference.
type Reference struct {
	Kind string `json:"kind"`
	Path string `json:"path"`
	// AudioPath is a replacement soundtrack for a video+audio reference;
	// empty means the clip's own soundtrack.
	AudioPath string `json:"audio_path,omitempty"`
}

// Request is one generation request, as the UI edits it and the CLI parses
// it. Zero values mean "default" where a default exists.
type Request struct {
	Model  string `json:"model,omitempty"` // snapshot directory, model profile, DemoModel or TinyModel; empty: the Renderer's default (the demo model)
	Prompt string `json:"prompt"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	// Frames or Seconds sets the length (not both); either is rounded up
	// to the next 17n+5 frames at 24 fps.
	Frames         int     `json:"frames,omitempty"`
	Seconds        float64 `json:"seconds,omitempty"`
	Steps          int     `json:"steps,omitempty"`
	Seed           int64   `json:"seed"`
	Layers         int     `json:"layers,omitempty"`
	Reuse          int     `json:"reuse,omitempty"`
	CoreReuse      int     `json:"core_reuse,omitempty"`
	TokenReduction bool    `json:"token_reduction,omitempty"`
	RenderWidth    int     `json:"render_width,omitempty"`
	RenderHeight   int     `json:"render_height,omitempty"`
	// FirstFrame and LastFrame are FL2VA anchor images.
	FirstFrame string `json:"first_frame,omitempty"`
	LastFrame  string `json:"last_frame,omitempty"`
	// References are Ref2VA inputs in request order (the order sets their
	// labels and their place on the model's timeline).
	References []Reference `json:"references,omitempty"`
	// RefImageSize is the reference-image sizing policy: official (default),
	// max or match.
	RefImageSize string `json:"ref_image_size,omitempty"`
	// RefClipSize is the reference-clip canvas: official (default: the
	// 768-class canvas of the clip's aspect, enlarging small clips) or
	// source (never enlarge, as h3.c and ComfyUI).
	RefClipSize string `json:"ref_clip_size,omitempty"`
	// LoRAs are low-rank adapters applied at run time, stacked in order.
	LoRAs []LoRA `json:"loras,omitempty"`
	// VideoShift and AudioShift are the sigma schedule's shifts (0: the
	// model's, 12 and 3); the Turbo preset takes its LoRA's.
	VideoShift float64 `json:"video_shift,omitempty"`
	AudioShift float64 `json:"audio_shift,omitempty"`
	Output     string  `json:"output,omitempty"`
	FramesDir  string  `json:"frames_dir,omitempty"`
	Preset     string  `json:"preset,omitempty"`
	Machine    string  `json:"machine,omitempty"`
}

// The release's defaults for a Request's zero fields (h3.c's; the step
// count is the planner's plan.DefaultSteps), ReleaseDefaults' values; a
// model that declares its own (Defaults) overrides them.
const (
	DefaultWidth  = 512
	DefaultHeight = 512
	DefaultFrames = 22
	// DefaultRefImageSize follows the official serving path (SGLang's
	// "diffusers" default: a 2048-pixel short edge, upscaling included);
	// "match" is ComfyUI's and h3.c's, and what the planner falls back to
	// when memory is short.
	DefaultRefImageSize = "official"
)

// WithDefaults is WithModelDefaults with the release's defaults.
func (r Request) WithDefaults() Request { return r.WithModelDefaults(ReleaseDefaults) }

// WithModelDefaults returns a copy with zero fields filled in from d (a
// side left zero gets the model's); the caller's request is never changed.
func (r Request) WithModelDefaults(d Defaults) Request {
	r.Prompt = CleanPrompt(r.Prompt)
	if r.Width == 0 {
		r.Width = d.Width
	}
	if r.Height == 0 {
		r.Height = d.Height
	}
	if r.Frames == 0 && r.Seconds == 0 {
		r.Frames = d.Frames
	}
	if r.Steps == 0 {
		r.Steps = d.Steps
	}
	if r.VideoShift == 0 {
		r.VideoShift = d.VideoShift
	}
	if r.AudioShift == 0 {
		r.AudioShift = d.AudioShift
	}
	if r.RefImageSize == "" {
		r.RefImageSize = DefaultRefImageSize
	}
	if r.RefClipSize == "" {
		r.RefClipSize = "official"
	}
	return r
}

// RequestedFrames is the frame count before alignment: --frames, or
// --seconds at 24 fps rounded up.
func (r Request) RequestedFrames() int {
	if r.Seconds > 0 {
		return int(math.Ceil(r.Seconds*24 - 1e-9))
	}
	return r.Frames
}

// Validate reports every problem with the request's own fields at once
// (model limits beyond the length are checked by the planner). Each is a
// *FlagError: the setting in words for the window, its flag for the
// terminal.
func (r Request) Validate() error {
	var errs []error
	bad := func(flag, format string, a ...any) {
		errs = append(errs, &FlagError{Msg: fmt.Sprintf(format, a...), Flag: flag})
	}
	if r.Frames != 0 && r.Seconds != 0 {
		bad("--frames, --seconds", "give the length in frames or in seconds, not both")
	}
	if r.Frames < 0 {
		bad("--frames", "the length must be positive, not %d frames", r.Frames)
	}
	if r.Seconds < 0 {
		bad("--seconds", "the length must be positive, not %g s", r.Seconds)
	}
	if f := r.RequestedFrames(); f > 0 && !lengthOK(f) {
		lo, hi := float64(layout.MinFrames)/layout.FPS, float64(layout.MaxFrames)/layout.FPS
		if r.Seconds > 0 {
			bad("--seconds", "a length of %g s is outside what the model makes, %.1f to %.0f s", r.Seconds, lo, hi)
		} else {
			bad("--frames", "a length of %d frames is outside what the model makes, %d to %d frames (%.1f to %.0f s)",
				f, layout.MinFrames, layout.MaxFrames, lo, hi)
		}
	}
	// A side left zero is the model's (WithModelDefaults).
	if r.Width < 0 {
		bad("--width", "the width must be positive, not %d", r.Width)
	}
	if r.Height < 0 {
		bad("--height", "the height must be positive, not %d", r.Height)
	}
	if (r.RenderWidth == 0) != (r.RenderHeight == 0) {
		bad("--render-width, --render-height", "set the render width and height together")
	}
	if r.Reuse > 0 && r.CoreReuse > 0 {
		bad("--reuse, --core-reuse", "velocity reuse and core reuse cannot be combined; choose one")
	}
	if r.VideoShift < 0 || r.VideoShift > 100 || r.AudioShift < 0 || r.AudioShift > 100 {
		bad("--video-shift, --audio-shift", "the sigma shifts %g and %g are outside 0..100 (0: the model's)", r.VideoShift, r.AudioShift)
	}
	if r.Steps < 0 || r.Steps > 1000 {
		bad("--steps", "the step count %d is outside 1..1000", r.Steps)
	}
	if r.Layers < 0 || r.Layers > 50 {
		bad("--layers", "the layer count %d is outside 1..50", r.Layers)
	}
	if r.Seed < 0 {
		// The official pipeline takes seeds 0..2^63-1.
		bad("--seed", "the seed must be 0 or more, not %d", r.Seed)
	}
	if (r.FirstFrame != "" || r.LastFrame != "") && len(r.References) > 0 {
		bad("--first-frame, --last-frame, --ref-*", "first and last frames and references cannot be mixed; use one or the other")
	}
	errs = append(errs, r.validateRefs()...)
	errs = append(errs, r.validateLoRAs()...)
	switch r.RefImageSize {
	case "", "match", "max", "official", "diffusers":
	default:
		bad("--ref-image-size", "reference picture sizing %q is not match, max or official", r.RefImageSize)
	}
	switch r.RefClipSize {
	case "", "official", "source":
	default:
		bad("--ref-clip-size", "reference clip sizing %q is not official or source", r.RefClipSize)
	}
	return errors.Join(errs...)
}

// lengthOK reports whether a requested frame count aligns into the
// model's range (the planner's own check, made here so the refusal can
// name the flag that set it).
func lengthOK(requested int) bool {
	f := layout.AlignFrames(requested)
	return f >= layout.MinFrames && f <= layout.MaxFrames
}

// validateRefs reports the references' own problems.
func (r Request) validateRefs() []error {
	var errs []error
	for i, ref := range r.References {
		switch ref.Kind {
		case RefImage, RefVideo, RefVideoAudio, RefAudio:
		default:
			errs = append(errs, fmt.Errorf("reference %d (%s) has unknown kind %q", i+1, ref.Path, ref.Kind))
		}
		if ref.Path == "" {
			errs = append(errs, fmt.Errorf("reference %d has no file", i+1))
		}
		if ref.AudioPath != "" && ref.Kind != RefVideoAudio {
			errs = append(errs, fmt.Errorf("reference %d (%s): only a clip with sound takes a soundtrack file", i+1, ref.Path))
		}
	}
	return errs
}
