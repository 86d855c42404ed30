package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"

	"h3studio/app"
)

// Save As is ⇧⌘S, as in every Mac app; copying the clip's path is ⌥⌘C,
// Finder's "Copy as Pathname".
var (
	saveAsShortcut   = &desktop.CustomShortcut{KeyName: fyne.KeyS, Modifier: fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift}
	copyPathShortcut = &desktop.CustomShortcut{KeyName: fyne.KeyC, Modifier: fyne.KeyModifierShortcutDefault | fyne.KeyModifierAlt}
)

func (s *Studio) menu() *fyne.MainMenu {
	add := fyne.NewMenuItem("Add Reference…", s.AddFiles)
	add.Shortcut = &desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: fyne.KeyModifierShortcutDefault}
	render := fyne.NewMenuItem("Render", s.Render)
	render.Shortcut = &desktop.CustomShortcut{KeyName: fyne.KeyR, Modifier: fyne.KeyModifierShortcutDefault}
	cancel := fyne.NewMenuItem("Cancel Render", s.CancelRunning)
	cancel.Shortcut = &desktop.CustomShortcut{KeyName: fyne.KeyPeriod, Modifier: fyne.KeyModifierShortcutDefault}
	saveAs := fyne.NewMenuItem("Save Clip As…", s.SaveClipAs)
	saveAs.Shortcut = saveAsShortcut
	copyPath := fyne.NewMenuItem("Copy Clip Path", s.CopyClipPath)
	copyPath.Shortcut = copyPathShortcut
	tmpl := fyne.NewMenuItem("Insert Prompt Template", s.ed.template.OnTapped)
	settings := fyne.NewMenuItem("Settings…", s.ShowSettings)
	settings.Shortcut = &desktop.CustomShortcut{KeyName: fyne.KeyComma, Modifier: fyne.KeyModifierShortcutDefault}
	// IsQuit makes this the app's one Quit (Fyne adds its own, which
	// quits without asking, only when no item claims the role).
	quit := fyne.NewMenuItem("Quit", s.Quit)
	quit.IsQuit = true
	quit.Shortcut = &desktop.CustomShortcut{KeyName: fyne.KeyQ, Modifier: fyne.KeyModifierShortcutDefault}
	return fyne.NewMainMenu(
		fyne.NewMenu("File", add, fyne.NewMenuItemSeparator(), saveAs, copyPath, fyne.NewMenuItemSeparator(), settings, fyne.NewMenuItemSeparator(), quit),
		fyne.NewMenu("Edit", s.editItems(tmpl)...),
		fyne.NewMenu("Render", render, cancel),
	)
}

// editItems are the Edit menu: Undo and Redo of the studio's history, and
// the clipboard actions of the focused field.
func (s *Studio) editItems(tmpl *fyne.MenuItem) []*fyne.MenuItem {
	undo := fyne.NewMenuItem("Undo", s.undoFocused)
	undo.Shortcut = &fyne.ShortcutUndo{}
	redo := fyne.NewMenuItem("Redo", s.redoFocused)
	redo.Shortcut = &fyne.ShortcutRedo{}
	clip := s.app.Clipboard()
	item := func(label string, sc fyne.Shortcut) *fyne.MenuItem {
		it := fyne.NewMenuItem(label, func() { s.toFocused(sc) })
		it.Shortcut = sc
		return it
	}
	return []*fyne.MenuItem{undo, redo, fyne.NewMenuItemSeparator(),
		item("Cut", &fyne.ShortcutCut{Clipboard: clip}), item("Copy", &fyne.ShortcutCopy{Clipboard: clip}),
		item("Paste", &fyne.ShortcutPaste{Clipboard: clip}), item("Select All", &fyne.ShortcutSelectAll{}),
		fyne.NewMenuItemSeparator(), tmpl}
}

// toFocused hands a clipboard shortcut to the focused field, if any.
func (s *Studio) toFocused(sc fyne.Shortcut) {
	if f, ok := s.win.Canvas().Focused().(fyne.Shortcutable); ok {
		f.TypedShortcut(sc)
	}
}

// undoFocused undoes in the focused field (a number's own undo) unless
// that is the prompt or nothing, which the studio's history covers.
func (s *Studio) undoFocused() { s.historyOrField(&fyne.ShortcutUndo{}, s.Undo) }

func (s *Studio) redoFocused() { s.historyOrField(&fyne.ShortcutRedo{}, s.Redo) }

func (s *Studio) historyOrField(sc fyne.Shortcut, studio func()) {
	f := s.win.Canvas().Focused()
	if sf, ok := f.(fyne.Shortcutable); ok && f != s.ed.prompt {
		sf.TypedShortcut(sc)
		return
	}
	studio()
}

func (s *Studio) addShortcuts() {
	for _, it := range []struct {
		key fyne.KeyName
		fn  func()
	}{{fyne.KeyO, s.AddFiles}, {fyne.KeyR, s.Render}, {fyne.KeyPeriod, s.CancelRunning}, {fyne.KeyQ, s.Quit}} {
		fn := it.fn
		s.win.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: it.key, Modifier: fyne.KeyModifierShortcutDefault},
			func(fyne.Shortcut) { fn() })
	}
	s.win.Canvas().AddShortcut(saveAsShortcut, func(fyne.Shortcut) { s.SaveClipAs() })
	s.win.Canvas().AddShortcut(copyPathShortcut, func(fyne.Shortcut) { s.CopyClipPath() })
	// Undo and Redo outside a text field (after Clear or a Trash click).
	s.win.Canvas().AddShortcut(&fyne.ShortcutUndo{}, func(fyne.Shortcut) { s.Undo() })
	s.win.Canvas().AddShortcut(&fyne.ShortcutRedo{}, func(fyne.Shortcut) { s.Redo() })
	s.win.SetCloseIntercept(s.Quit)
}

// Quit closes the window, which ends the app; during a render it asks
// first, because quitting cancels the render and loses its progress.
func (s *Studio) Quit() {
	if s.running == "" {
		s.win.Close()
		return
	}
	dialog.ShowConfirm(app.QuitTitle, app.QuitText, func(ok bool) {
		if ok {
			s.win.Close()
		}
	}, s.win)
}
