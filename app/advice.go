package app

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"h3studio/engine"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/media"
)

// Refusal is the one sentence that says why a plan was refused and, when
// the planner found one, what would fit. The CLI prints it (as a
// RefusedError) and the window shows it under the Render button.
func Refusal(p *plan.Plan) string {
	msg := "the request does not fit this machine: " + p.Error
	// The planner's error often names the repair already; saying it twice
	// reads as two different problems.
	if p.Repair != nil && p.Repair.Text != "" && !strings.Contains(p.Error, p.Repair.Text) {
		msg += "; " + p.Repair.Text
	}
	return msg
}

// canceledText is what a canceled render says, at the terminal and in the
// window: the engine and the MP4 writer leave nothing at the output path.
const canceledText = "canceled; nothing was written"

// outOfMemoryText is the advice for a render the backend could not
// allocate although its plan fit the budget.
const outOfMemoryText = "the machine ran out of memory although the plan fit its budget; " +
	"lower the memory budget (Settings, or --memory-gb), or render a smaller canvas or a shorter clip"

// Advice is err as a person reads it, in the window or at the terminal:
// the sentence app keeps for the error's type, one line per joined error,
// each starting with a capital. Errors are matched by type and sentinel,
// never by their text; one without a mapping is shown as written, so a
// developer's message that reaches people stays visible until it gets one.
func Advice(err error) string {
	var lines []string
	for _, e := range leaves(err) {
		if s := adviceFor(e); s != "" {
			lines = append(lines, strings.ToUpper(s[:1])+s[1:])
		}
	}
	return strings.Join(lines, "\n")
}

// leaves splits err into the errors it joins, looking through the
// RequestError that wraps a request's joined field errors.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	if req, ok := err.(*RequestError); ok && req.Err != nil {
		return leaves(req.Err)
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	return []error{err}
}

// adviceFor is the sentence for one error that joins no others.
func adviceFor(err error) string {
	var refused *RefusedError
	var limit *layout.LimitError
	var file *fs.PathError
	switch {
	case errors.As(err, &refused):
		return Refusal(refused.Plan)
	case errors.Is(err, engine.ErrCanceled), errors.Is(err, context.Canceled):
		return canceledText
	case errors.Is(err, engine.ErrOutOfMemory):
		// The plan fit the budget but the device could not allocate it:
		// the budget is too generous for what else the machine runs.
		return outOfMemoryText
	case errors.Is(err, media.ErrNoFFmpeg):
		return "FFmpeg was not found; install it (macOS: brew install ffmpeg) and try again"
	case errors.As(err, &limit):
		return limit.Msg
	case errors.As(err, &file) && errors.Is(err, fs.ErrNotExist):
		return file.Path + " is missing; it was moved or deleted"
	case errors.As(err, &file) && errors.Is(err, fs.ErrPermission):
		return file.Path + " cannot be read: permission denied"
	}
	return err.Error()
}
