package app

import "strings"

// Sentences of the studio window's safety net, kept here with the rest of
// what people read.
const (
	// RenderWaitsText shows while a Render click waits for the plan of
	// the latest edit.
	RenderWaitsText = "Render starts as soon as the plan of your last change is ready."
	// CancelingText shows from a Cancel click until the render stops at
	// its next step or frame.
	CancelingText = "Canceling…"
	// QuitTitle and QuitText ask before Quit ends a render.
	QuitTitle = "A render is running"
	QuitText  = "Quit cancels it and loses its progress. Quit anyway?"
)

// CleanPrompt is the prompt as the model reads it: a tab (typed in an
// editor that takes it, or pasted) becomes a space, because the model
// card's prompts separate words with spaces and a tab is a token of its
// own that shifts the count the plan shows.
func CleanPrompt(p string) string { return strings.ReplaceAll(p, "\t", " ") }
