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

// RestoringText shows while a reused request's references are read again
// (files the window has not read since they changed, or since it started).
func RestoringText(n int) string {
	return "Restoring the settings; reading " + countText(n, "reference") + "…"
}

// RestoredText is the notice once a reused request's references are in:
// notice, then each file that could not be added back and why.
func RestoredText(notice string, rejected []*RefRejectedError) string {
	if len(rejected) == 0 {
		return notice
	}
	return notice + " " + AddedText(nil, rejected)
}

// LastRequestBackText is the notice when the window opens with the last
// rendered request in the editor.
const LastRequestBackText = "Your last request is back; drop files to change the references."
