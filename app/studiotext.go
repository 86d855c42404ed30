package app

import (
	"h3studio/engine/plan"
	"strings"
)

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

// RestoredFromHistoryText is the notice after Reuse of a history entry.
const RestoredFromHistoryText = "Settings restored from the history."

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

// Sentences of the Settings dialog. It stays open on a bad entry and
// shows the sentence under the fields, so nothing typed is lost.
const (
	// BadMemoryBudgetText is a budget field that is not a size.
	BadMemoryBudgetText = "The memory budget must be a number of GB above zero, such as 48 or 0.5, or empty for the machine's own budget."
	// NoClipFolderText is a clip folder that is not there.
	NoClipFolderText = "The folder for clips does not exist; choose an existing folder."
	// CheckingModelText shows while Settings checks the model folder.
	CheckingModelText = "Checking the model folder…"
)

// OwnBudgetText is the memory field's placeholder: empty is the machine's
// own budget, named as a Mac only on one.
func OwnBudgetText(mc plan.Machine) string {
	return "empty: " + machineNoun(mc.Mac()) + "'s budget, " + GBText(mc.Budget())
}

// ReadingText shows while dropped or chosen files are read ("Reading 1
// file…", never "1 file(s)").
func ReadingText(n int) string { return "Reading " + countText(n, "file") + "…" }

// LoRAChangedText adds to a restored LoRA's coverage line that its file is
// not the one the clip was made with (its SHA-256 differs).
func LoRAChangedText(coverage string) string {
	return coverage + " · changed since the clip was made: this render will differ"
}

// Names of the built-in models, as the window and the terminal say them.
const (
	// DemoModelText is the model used when no folder is chosen.
	DemoModelText = "built-in demo model"
	// TinyModelText is the random-weight model the tests use.
	TinyModelText = "tiny random model"
	// NoModelFolderText is the Settings model field's placeholder.
	NoModelFolderText = "empty: the " + DemoModelText
)

// BuiltInModelName is a built-in model's name in words (DemoModel or
// TinyModel), or the name itself for anything else.
func BuiltInModelName(model string) string {
	switch model {
	case DemoModel:
		return DemoModelText
	case TinyModel:
		return TinyModelText
	}
	return model
}
