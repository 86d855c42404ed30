package app

import (
	"fmt"
	"os"
	"slices"

	"h3studio/engine/plan"
	"h3studio/engine/weights"
)

// CheckModelFolder is the check a model passes before anything is planned
// or rendered with it; the CLI's -d and the window's Settings make this
// same one. "" (the Renderer's default), DemoModel and TinyModel are the
// built-in models, and a planner
// profile's name (official-q4_k) plans without weights. Anything else
// must be a folder holding a snapshot the engine can open
// (weights.Discover, as engine.Open reads it). Errors are a
// *RequestError that Advice words.
func CheckModelFolder(model string) error {
	if model == "" || model == DemoModel || model == TinyModel || slices.Contains(plan.ModelNames, model) {
		return nil
	}
	if st, err := os.Stat(model); err != nil || !st.IsDir() {
		return &RequestError{&FlagError{Msg: fmt.Sprintf("the model %s is not a folder; choose a downloaded MiniMax-H3 folder, or none for the %s", model, DemoModelText), Flag: "-d"}}
	}
	if _, err := weights.Discover(model); err != nil {
		return &RequestError{err}
	}
	return nil
}
