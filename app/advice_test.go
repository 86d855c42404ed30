package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/media"
)

func TestRefusal(t *testing.T) {
	p := &plan.Plan{Error: "peak 9.0 GB exceeds the 8.0 GB budget", Repair: &plan.Repair{Text: "a 2 s clip fits"}}
	want := "the request does not fit this machine: peak 9.0 GB exceeds the 8.0 GB budget; a 2 s clip fits"
	if got := Refusal(p); got != want {
		t.Errorf("Refusal = %q, want %q", got, want)
	}
	// A repair the error already names is not said twice.
	p.Error = "peak 9.0 GB exceeds the budget (a 2 s clip fits)"
	if got, want := Refusal(p), "the request does not fit this machine: "+p.Error; got != want {
		t.Errorf("Refusal = %q, want %q", got, want)
	}
	if got := (&RefusedError{p}).Error(); got != Refusal(p) {
		t.Errorf("RefusedError says %q, Refusal %q", got, Refusal(p))
	}
}

func TestAdvice(t *testing.T) {
	refused := &plan.Plan{Error: "peak 9.0 GB exceeds the 8.0 GB budget"}
	big := layout.Canvas{Width: 768, Height: 1536}
	missingPath := filepath.Join(t.TempDir(), "gone.png")
	_, missing := media.Probe(context.Background(), missingPath)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"none", nil, ""},
		{"refused", &RefusedError{refused}, "The request does not fit this machine: " + refused.Error},
		{"canceled", fmt.Errorf("denoise: %w", engine.ErrCanceled), "Canceled; nothing was written"},
		{"context canceled", context.Canceled, "Canceled; nothing was written"},
		{"out of memory", fmt.Errorf("engine: denoise: %w", engine.ErrOutOfMemory),
			"The machine ran out of memory although the plan fit its budget; lower the memory budget in Settings, or render a smaller canvas or a shorter clip"},
		{"no ffmpeg", fmt.Errorf("reference 1: %w: no ffprobe on PATH", media.ErrNoFFmpeg),
			"FFmpeg was not found; install it (macOS: brew install ffmpeg) and try again"},
		{"model rule", &RequestError{big.ValidateModel()},
			"Canvas 768x1536 has 1,179,648 pixels, over the model's cap of 768x1344 = 1,032,192 (try " + layout.AdaptCanvas(big).String() + ")"},
		{"joined fields", &RequestError{errors.Join(errors.New("the length must be positive"), &FlagError{Msg: "the step count 0 is outside 1..1000", Flag: "--steps"})},
			"The length must be positive\nThe step count 0 is outside 1..1000"},
		{"missing file", missing, "Cannot find gone.png; check the name, or whether it was moved or deleted"},
		{"unreadable file", fmt.Errorf("media: probe /x/a.png: %w", &fs.PathError{Op: "open", Path: "/x/a.png", Err: fs.ErrPermission}),
			"Cannot open a.png: permission denied; check the file's permissions"},
		{"untyped", errors.New("engine: snapshot x: no config.json"), "Engine: snapshot x: no config.json"},
	} {
		if got := Advice(c.err); got != c.want {
			t.Errorf("%s: Advice = %q, want %q", c.name, got, c.want)
		}
	}
}

// The CLI gives the window's out-of-memory advice, naming its flag where
// the window names Settings; the engine's error stays for the log.
func TestRenderExitOutOfMemory(t *testing.T) {
	err := renderExit(fmt.Errorf("engine: denoise: %w", engine.ErrOutOfMemory))
	var exit *exitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitFailed || TerminalAdvice(err) != outOfMemoryText(terminal) || !errors.Is(err, engine.ErrOutOfMemory) {
		t.Errorf("renderExit = %v", err)
	}
	if w, c := Advice(err), TerminalAdvice(err); strings.Contains(w, "--") || !strings.Contains(c, "--memory-gb") {
		t.Errorf("window %q, terminal %q: the flag belongs to the terminal only", w, c)
	}
}

// A refusal under a budget set below the machine's names the budget that
// fits and where it is set: Settings in the window, the flag at the
// terminal; never a bigger machine.
func TestRefusalUnderSetBudget(t *testing.T) {
	rd := newRenderer(t)
	r := tinyRequest(t, "small-budget.mp4")
	r.Machine = "m5-max-128"
	rd.SetMemoryGB(0.01)
	_, err := rd.Prepare(context.Background(), r)
	var refused *RefusedError
	if !errors.As(err, &refused) || refused.Plan.Repair == nil || refused.Plan.Repair.BudgetGB <= 0 {
		t.Fatalf("under 0.01 GB: %v", err)
	}
	w, c := Advice(err), TerminalAdvice(err)
	t.Logf("window: %s\nterminal: %s", w, c)
	gb := fmt.Sprintf("%.1f", refused.Plan.Repair.BudgetGB)
	if !strings.Contains(w, "a memory budget of "+gb+" GB (Memory budget, in Settings)") || strings.Contains(w, "--") || strings.Contains(w, "a Mac with") {
		t.Errorf("window: %q", w)
	}
	if !strings.HasSuffix(c, "(--memory-gb "+gb+")") {
		t.Errorf("terminal: %q", c)
	}
}
