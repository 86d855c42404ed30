package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// promptEntry is the multi-line prompt field. A multi-line Entry takes
// Tab as text, which traps keyboard users in it and sends tab characters
// to the model; this one lets Tab and Shift-Tab move the focus (the
// driver does so for a widget that does not accept Tab), gives the focus
// up on Escape, and hands Undo and Redo to the studio's edit history so
// one Cmd-Z undoes prompt and reference edits in the order they were made.
type promptEntry struct {
	widget.Entry
	undo, redo func()
}

func newPromptEntry() *promptEntry {
	e := &promptEntry{}
	e.MultiLine = true
	e.Wrapping = fyne.TextWrapWord
	e.ExtendBaseWidget(e)
	return e
}

// AcceptsTab is false so the driver moves the focus on Tab.
func (e *promptEntry) AcceptsTab() bool { return false }

// TypedKey gives the focus up on Escape; other keys edit as usual.
func (e *promptEntry) TypedKey(k *fyne.KeyEvent) {
	if k.Name == fyne.KeyEscape {
		if c := fyne.CurrentApp().Driver().CanvasForObject(e); c != nil {
			c.Unfocus()
		}
		return
	}
	e.Entry.TypedKey(k)
}

// TypedShortcut routes Undo and Redo to the studio's history.
func (e *promptEntry) TypedShortcut(s fyne.Shortcut) {
	switch s.(type) {
	case *fyne.ShortcutUndo:
		if e.undo != nil {
			e.undo()
			return
		}
	case *fyne.ShortcutRedo:
		if e.redo != nil {
			e.redo()
			return
		}
	}
	e.Entry.TypedShortcut(s)
}
