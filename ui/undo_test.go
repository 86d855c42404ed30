package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
)

// menuItem finds the main menu's item of that label.
func menuItem(t testing.TB, s *Studio, menu, label string) *fyne.MenuItem {
	t.Helper()
	for _, m := range s.Window().MainMenu().Items {
		if m.Label != menu {
			continue
		}
		for _, it := range m.Items {
			if it.Label == label {
				return it
			}
		}
	}
	t.Fatalf("no %s › %s", menu, label)
	return nil
}

// Clear and Trash can be undone and redone from the Edit menu, and so can
// prompt edits; Template inserts its block once however often it is pressed.
func TestUndoReferencesAndPrompt(t *testing.T) {
	h := newHarness(t)
	still, _, voice := fixtures(t)
	h.drop(still, voice)
	h.waitSettled()
	h.run(func() {
		for _, l := range []string{"Undo", "Redo", "Cut", "Copy", "Paste", "Select All"} {
			menuItem(t, h.s, "Edit", l)
		}
		var clear *widget.Button
		for _, b := range visibleButtons(h.s.Window().Content()) {
			if b.Text == "Clear" {
				clear = b.Button
			}
		}
		if clear == nil {
			t.Fatal("no Clear button")
		}
		test.Tap(clear)
		if len(h.s.images.items)+len(h.s.audio.items) != 0 {
			t.Fatal("Clear left references")
		}
		menuItem(t, h.s, "Edit", "Undo").Action()
		if len(h.s.images.items) != 1 || len(h.s.audio.items) != 1 || h.s.images.items[0].Path != still {
			t.Fatalf("Undo after Clear: %v %v", paths(h.s.images.items), paths(h.s.audio.items))
		}
		menuItem(t, h.s, "Edit", "Redo").Action()
		if len(h.s.images.items)+len(h.s.audio.items) != 0 {
			t.Errorf("Redo of Clear: %v %v", paths(h.s.images.items), paths(h.s.audio.items))
		}
		menuItem(t, h.s, "Edit", "Undo").Action()
		test.Tap(buttonWith(t, h.s.images.box.Objects[1], theme.DeleteIcon(), ""))
		if len(h.s.images.items) != 0 {
			t.Fatal("Trash left the picture")
		}
		menuItem(t, h.s, "Edit", "Undo").Action()
		if len(h.s.images.items) != 1 {
			t.Errorf("Undo after Trash: %v", paths(h.s.images.items))
		}

		h.s.ed.prompt.SetText("a fox")
		test.Tap(h.s.ed.template)
		test.Tap(h.s.ed.template)
		if n := strings.Count(h.s.ed.prompt.Text, "Scene:"); n != 1 {
			t.Errorf("Template twice gives %d blocks: %q", n, h.s.ed.prompt.Text)
		}
		menuItem(t, h.s, "Edit", "Undo").Action()
		if h.s.ed.prompt.Text != "a fox" {
			t.Errorf("Undo after Template: %q", h.s.ed.prompt.Text)
		}
	})
}

// Cancel says "Canceling…" at once, and Quit during a render asks first.
func TestCancelingAndQuitConfirm(t *testing.T) {
	h := newHarness(t)
	h.small("Default")
	h.run(func() {
		quit := menuItem(t, h.s, "File", "Quit")
		if !quit.IsQuit {
			t.Error("File › Quit is not the app's quit item")
		}
		test.Tap(h.s.renderBtn)
	})
	h.waitFor("the render to run", 60*time.Second, func() bool { return h.s.running != "" })
	h.run(func() {
		menuItem(t, h.s, "File", "Quit").Action()
		if h.s.Window().Canvas().Overlays().Top() == nil {
			t.Error("Quit during a render did not ask")
		}
		if st := h.status(h.s.running); st != app.StatusRunning {
			t.Errorf("the render is %s after Quit was asked, want running", st)
		}
		h.s.Window().Canvas().Overlays().Top().Hide()
		h.s.CancelRunning()
		if h.s.phase.Text != "Canceling…" || !h.s.cancelBtn.Disabled() {
			t.Errorf("after Cancel: phase %q, cancel enabled %v", h.s.phase.Text, !h.s.cancelBtn.Disabled())
		}
	})
	h.waitFor("the render to stop", 60*time.Second, func() bool { return h.s.running == "" })
	h.run(func() {
		if h.s.phase.Text != "Canceled" {
			t.Errorf("after the cancel: %q", h.s.phase.Text)
		}
	})
}
