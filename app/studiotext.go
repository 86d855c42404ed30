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

// SavedText says where Save As put the clip.
func SavedText(dst string) string { return "Saved the clip as " + baseName(dst) + "." }

// CopiedPathText says that the clip's path is on the clipboard.
func CopiedPathText(path string) string {
	return "Copied the path of " + baseName(path) + "; paste it in Finder's Go to Folder or a terminal."
}

// NoClipText answers Save As and Copy before a clip is on the timeline.
const NoClipText = "No clip yet: render one, or play one from the History."

// ReplaceTitle and ReplaceText ask before Save As replaces a file (where
// the system's save panel, which asks itself, is missing).
const ReplaceTitle = "Replace the file?"

// ReplaceText names the file Save As would replace.
func ReplaceText(dst string) string {
	return baseName(dst) + " already exists in that folder. Replace it with this clip?"
}
