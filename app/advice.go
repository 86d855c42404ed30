package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"h3studio/engine"
	"h3studio/engine/layout"
	"h3studio/engine/lora"
	"h3studio/engine/plan"
	"h3studio/engine/weights"
	"h3studio/media"
)

// Refusal is the one sentence that says why a plan was refused and, when
// the planner found one, what would fit. The CLI prints it (as a
// RefusedError) and the window shows it under the Render button.
func Refusal(p *plan.Plan) string {
	return "the request does not fit " + MachineText(p) + ": " + refusalReason(p)
}

// refusalReason is why the plan was refused and what would fit. A plan
// over its memory budget alone is worded here (sizes by GBText, the phase
// in words); any other refusal in the planner's words.
func refusalReason(p *plan.Plan) string {
	m := p.Memory
	tt := p.TextTokens
	if m.PeakBytes > m.BudgetBytes && (tt.Limit == 0 || tt.Total <= tt.Limit) {
		msg := fmt.Sprintf("it needs %s %s, over the %s budget", GBText(m.PeakBytes), MemoryPhaseText(m.PeakPhase), GBText(m.BudgetBytes))
		if p.Repair != nil && p.Repair.Text != "" {
			msg += "; " + p.Repair.Text
		}
		return msg
	}
	msg := p.Error
	// The planner's error often names the repair already; saying it twice
	// reads as two different problems.
	if p.Repair != nil && p.Repair.Text != "" && !strings.Contains(p.Error, p.Repair.Text) {
		msg += "; " + p.Repair.Text
	}
	return msg
}

// budgetRepairWhere says where the budget a refusal's repair names is set:
// the window's Settings, or the terminal's flag.
func budgetRepairWhere(p *plan.Plan, s surface) string {
	if p.Repair == nil || p.Repair.BudgetGB <= 0 {
		return ""
	}
	if s == terminal {
		return fmt.Sprintf(" (--memory-gb %.1f)", p.Repair.BudgetGB)
	}
	return " (Memory budget, in Settings)"
}

// canceledText is what a canceled render says, at the terminal and in the
// window: the engine and the MP4 writer leave nothing at the output path.
const canceledText = "canceled; nothing was written"

// outOfMemoryText is the advice for a render the backend could not
// allocate although its plan fit the budget; the window names Settings
// for the budget, the terminal its flag.
func outOfMemoryText(s surface) string {
	where := "in Settings"
	if s == terminal {
		where = "with --memory-gb"
	}
	return "the machine ran out of memory although the plan fit its budget; " +
		"lower the memory budget " + where + ", or render a smaller canvas or a shorter clip"
}

const noFFmpegText = "FFmpeg was not found; install it (macOS: brew install ffmpeg) and try again"

// surface is where a sentence is read: the window names files by their
// base name and its own controls, the terminal files as typed and flags.
type surface int

const (
	window surface = iota
	terminal
)

// FlagError is a request field out of range. Msg names the setting in
// words, the same in the window; the terminal adds Flag.
type FlagError struct {
	Msg  string
	Flag string
}

func (e *FlagError) Error() string { return e.Flag + ": " + e.Msg }

// Advice is err as a person reads it in the window: the sentence app
// keeps for the error's type, one line per joined error, each starting
// with a capital. Errors are matched by type and sentinel, never by their
// text; one without a mapping is shown as written, so a developer's
// message that reaches people stays visible until it gets one.
func Advice(err error) string {
	var lines []string
	for _, e := range leaves(err) {
		if s := adviceFor(e, window); s != "" {
			lines = append(lines, capitalize(s))
		}
	}
	return strings.Join(lines, "\n")
}

// TerminalAdvice is Advice for the command line: the same sentences, one
// line, files as typed and the flags that set what a sentence names.
func TerminalAdvice(err error) string {
	var parts []string
	for _, e := range leaves(err) {
		if s := adviceFor(e, terminal); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, "; ")
}

// capitalize starts a sentence with a capital unless it starts with a file
// name (an unmapped error's "fake.png: ..."), which would rename the file.
func capitalize(s string) string {
	first, _, _ := strings.Cut(s, " ")
	if strings.ContainsAny(first, "./\\") {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// leaves splits err into the errors it joins, looking through the
// RequestError that wraps a request's joined field errors.
func leaves(err error) []error {
	if err == nil {
		return nil
	}
	// Through the exit status and request wrappers to the joined errors.
	var req *RequestError
	if errors.As(err, &req) && req.Err != nil {
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
func adviceFor(err error, s surface) string {
	var refused *RefusedError
	var limit *layout.LimitError
	var file *FileError
	var flagErr *FlagError
	var pathErr *fs.PathError
	var snap *weights.SnapshotError
	var misfit *lora.Misfit
	var save *SaveError
	name := func(p string) string {
		if s == window {
			return baseName(p)
		}
		return p
	}
	switch {
	case errors.As(err, &refused):
		return Refusal(refused.Plan) + budgetRepairWhere(refused.Plan, s)
	case errors.Is(err, engine.ErrCanceled), errors.Is(err, context.Canceled):
		return canceledText
	case errors.Is(err, engine.ErrOutOfMemory):
		// The plan fit the budget but the device could not allocate it:
		// the budget is too generous for what else the machine runs.
		return outOfMemoryText(s)
	case errors.As(err, &file):
		return fileAdvice(file, name(file.Path))
	case errors.Is(err, media.ErrNoFFmpeg):
		return noFFmpegText
	case errors.As(err, &flagErr):
		if s == terminal {
			return flagErr.Msg + " (" + flagErr.Flag + ")"
		}
		return flagErr.Msg
	case errors.As(err, &limit):
		return limit.Msg
	case errors.As(err, &snap):
		return snapshotAdvice(snap, s)
	case errors.As(err, &misfit):
		return loraAdvice(misfit, name(misfit.Path))
	case errors.As(err, &save):
		return saveAdvice(save, name(save.Path))
	case errors.As(err, &pathErr):
		return fileAdvice(&FileError{pathErr.Path, err}, name(pathErr.Path))
	}
	return err.Error()
}

// snapshotAdvice is a model folder that is not a usable snapshot. The
// window says what to choose; the terminal adds weights' own reason, which
// names the files it looked for (and the -d flag).
func snapshotAdvice(e *weights.SnapshotError, s surface) string {
	msg := "the folder " + e.Path + " is not a usable MiniMax-H3 model; choose the folder the download made, or check that it downloaded completely"
	if s == terminal {
		msg += " (-d: " + e.Path + " " + e.Msg + ")"
	}
	return msg
}

// loraAdvice is the sentence for an adapter that does not fit the model:
// nothing was applied, since half an adapter is a different one.
func loraAdvice(e *lora.Misfit, name string) string {
	switch e.Kind {
	case lora.Shape:
		return "the LoRA " + name + " does not fit this model (" + e.Detail + "); it was made for another model or another size of MiniMax-H3"
	case lora.Unmatched:
		return "the LoRA " + name + " changes parts this model does not have (" + firstKey(e) + "); it was made for another model"
	case lora.Unsupported:
		return "the LoRA " + name + " changes " + firstKey(e) + ", which H3 Studio applies no LoRA to (only the attention, MLP and AdaLN linears); applying only the rest would change what it does, so it was not used"
	case lora.ExtraTensors:
		return "the LoRA " + name + " carries tensors beyond its LoRA pairs (" + firstKey(e) + ", such as the output heads of PDD adapters), which H3 Studio cannot apply; applying only the rest would change what it does, so it was not used"
	case lora.Partition:
		return "the LoRA " + name + " was " + e.Detail + "; choose the LoRA made for this task's model"
	}
	return "the file " + name + " is not a LoRA H3 Studio can read (" + e.Detail + "); choose a LoRA .safetensors file"
}

// firstKey is a misfit's first tensor name, and how many more there are.
func firstKey(e *lora.Misfit) string {
	switch len(e.Keys) {
	case 0:
		return "no tensor named"
	case 1:
		return e.Keys[0]
	}
	return fmt.Sprintf("%s and %d more", e.Keys[0], len(e.Keys)-1)
}

// saveAdvice is the sentence for a Save As that did not happen.
func saveAdvice(e *SaveError, name string) string {
	if errors.Is(e.Err, errOverSource) {
		return "the clip cannot replace itself; choose another name or folder"
	}
	dir := filepath.Dir(e.Path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Sprintf("cannot save %s: the folder %s does not exist; choose another", name, filepath.Base(dir))
	}
	return "cannot save " + name + "; check that you may write to that folder and that the disk has room"
}
