package engine

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/engine/tokenizer"
)

// TestTokenizerOpenedOnce: Plan counts the prompt with the snapshot's own
// tokenizer, parsed once per Engine, and Generate encodes with that same
// tokenizer: once the files are gone, a second plan still counts exactly
// and the render still runs. A profile alone estimates.
func TestTokenizerOpenedOnce(t *testing.T) {
	dir, err := TinyModelDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := Open(dir, Options{Threads: 1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	tok, err := tokenizer.Load(e.Snapshot().Tokenizer())
	if err != nil {
		t.Fatal(err)
	}
	mc, err := plan.LookupMachine("m5-max-128")
	if err != nil {
		t.Fatal(err)
	}
	r := plan.Request{Canvas: layout.Canvas{Width: 64, Height: 64}, Frames: 22, Steps: 1, Prompt: "a red fox runs through fresh snow"}
	counted := func(when string) *plan.Plan {
		t.Helper()
		p, err := e.Plan(r, mc, plan.Options{})
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if want := len(tok.Encode(r.Prompt)); p.TextTokens.Prompt != want || p.TextTokens.Estimated {
			t.Errorf("%s: prompt %d tokens (estimated %v), want %d counted", when, p.TextTokens.Prompt, p.TextTokens.Estimated, want)
		}
		return p
	}
	counted("first plan")
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "tokenizer.json" {
			return err
		}
		return os.Remove(path)
	})
	if err != nil {
		t.Fatal(err)
	}
	r.Prompt = "a grey wolf at dusk, howling"
	p := counted("plan after the files went")
	var out recorder
	if _, err := e.Generate(context.Background(), Request{Output: &out}, p, nil); err != nil || len(out.frames) != 22 {
		t.Errorf("generate after the files went: %v, %d frames", err, len(out.frames))
	}
	est, err := PlanFor(e.Profile(), r, mc, plan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !est.TextTokens.Estimated || est.TextTokens.Prompt != estimateTokens(r.Prompt) {
		t.Errorf("profile plan: prompt %d tokens, estimated %v; want the estimate %d", est.TextTokens.Prompt, est.TextTokens.Estimated, estimateTokens(r.Prompt))
	}
}
