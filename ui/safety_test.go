package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"h3studio/app"
)

// A Render click in the moment after an edit, while the debounced plan
// is still pending, renders once the plan is ready; a click whose plan
// refuses says why instead of vanishing.
func TestRenderClickWhilePlanning(t *testing.T) {
	h := newHarness(t)
	h.small("Fast")
	h.run(func() {
		h.s.ed.seed.SetText("5")
		if h.s.planned == h.s.edits {
			t.Fatal("the plan should still be pending right after the edit")
		}
		test.Tap(h.s.renderBtn)
		if h.s.reason.Text == "" {
			t.Error("a click while the plan updates says nothing")
		}
	})
	h.waitFor("the click's render to be queued", 30*time.Second, func() bool { return len(h.s.queue.Jobs()) == 1 })
	h.run(func() {
		j := h.s.queue.Jobs()[0]
		if j.Request.Seed != 5 {
			t.Errorf("queued seed %d, want the edited 5", j.Request.Seed)
		}
		h.s.queue.Cancel(j.ID)
		h.s.ed.width.SetText("1024")
		h.s.ed.height.SetText("1344")
		test.Tap(h.s.renderBtn)
	})
	h.waitSettled()
	h.run(func() {
		if n := len(h.s.queue.Jobs()); n != 1 {
			t.Errorf("a refused request was queued: %d jobs", n)
		}
		if !strings.Contains(h.s.reason.Text, "over the model's cap") {
			t.Errorf("the refused click says %q", h.s.reason.Text)
		}
	})
}

// pressTab is the GLFW driver's Tab handling (internal/driver/glfw
// window.go capturesTab): a focused widget that accepts Tab gets the key,
// any other focus moves.
func pressTab(c fyne.Canvas, shift bool) {
	if f, ok := c.Focused().(fyne.Tabbable); ok && f.AcceptsTab() {
		c.Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyTab})
		return
	}
	if shift {
		c.FocusPrevious()
	} else {
		c.FocusNext()
	}
}

// Tab and Shift-Tab leave the prompt instead of typing tab characters,
// Escape gives the focus up, and tabs pasted into the prompt never reach
// the planner (or the model).
func TestTabLeavesPrompt(t *testing.T) {
	h := newHarness(t)
	h.waitSettled()
	h.run(func() {
		c := h.s.Window().Canvas()
		c.Focus(h.s.ed.prompt)
		test.Type(h.s.ed.prompt, "fox")
		pressTab(c, false)
		if strings.Contains(h.s.ed.prompt.Text, "\t") {
			t.Errorf("Tab typed into the prompt: %q", h.s.ed.prompt.Text)
		}
		if c.Focused() == h.s.ed.prompt {
			t.Error("Tab left the focus in the prompt")
		}
		pressTab(c, true)
		if c.Focused() != h.s.ed.prompt {
			t.Errorf("Shift-Tab did not come back to the prompt: %T", c.Focused())
		}
		h.s.ed.prompt.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
		if c.Focused() != nil {
			t.Errorf("Escape kept the focus in %T", c.Focused())
		}
		h.s.ed.prompt.SetText("a fox\truns\t\tfast") // a paste
	})
	h.waitSettled()
	var req app.Request
	h.run(func() { req, _ = h.s.Request() })
	p, err := h.s.cfg.Plan(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(p.Request.Prompt, "\t") {
		t.Errorf("the planned prompt keeps the pasted tabs: %q", p.Request.Prompt)
	}
}

// Every icon-only button the studio draws says what it does when the
// pointer rests on it.
func TestIconButtonsHaveTooltips(t *testing.T) {
	h := newHarness(t)
	still, _, _ := fixtures(t)
	h.drop(still, still) // rows with up, down and trash buttons
	h.waitSettled()
	h.run(func() {
		c := h.s.Window().Canvas()
		var icons []shownButton
		for _, b := range visibleButtons(c.Content()) {
			if b.Text == "" {
				icons = append(icons, b)
			}
		}
		if len(icons) < 8 { // settings, dice, and two rows of up, down, trash
			t.Errorf("found %d icon buttons, want at least 8", len(icons))
		}
		for _, b := range icons {
			at, ok := absPos(c.Content(), b.obj, fyne.Position{})
			if !ok {
				t.Fatalf("icon button %s not on the canvas", b.Icon.Name())
			}
			pos := at.Add(fyne.NewPos(b.Size().Width/2, b.Size().Height/2))
			test.MoveMouse(c, pos)
			tip := h.s.tips.text()
			if tip == "" {
				t.Errorf("icon button %s at %v has no tooltip", b.Icon.Name(), pos)
			}
			test.MoveMouse(c, fyne.NewPos(1, 1))
			if h.s.tips.text() != "" {
				t.Errorf("tooltip %q stays after the pointer left", tip)
			}
		}
	})
}

// The window fits a laptop: its minimum is at most 1024x700 and stays so
// with Advanced open and a long notice; the editor scrolls above a
// resizable split with the viewer; at 1024x700 nothing overlaps.
func TestWindowFitsLaptop(t *testing.T) {
	h := newHarness(t)
	h.waitSettled()
	h.run(func() {
		w := h.s.Window()
		h.s.ed.advanced.Open(0)
		h.s.notice.SetText(strings.Repeat("A long notice that wraps over many lines. ", 20))
		if m := w.Content().MinSize(); m.Width > 1024 || m.Height > 700 {
			t.Errorf("minimum size %v, want at most 1024x700", m)
		}
		split := findSplit(w.Content(), h.s.ed.prompt, h.s.stage)
		if split == nil {
			t.Fatal("no vertical split between the editor and the viewer")
		}
		if !contains(split.Leading, h.s.edScroll) || !contains(h.s.edScroll, h.s.ed.advanced) {
			t.Error("the editor does not scroll above the split")
		}
		t.Logf("minimum size %v", w.Content().MinSize())
		for _, size := range []fyne.Size{{Width: 1024, Height: 700}, {Width: 1280, Height: 800}, {Width: 1440, Height: 900}} {
			w.Resize(size)
			var ls []rect
			leaves(w.Canvas().Content(), fyne.Position{}, rect{max: fyne.NewPos(size.Width, size.Height)}, &ls)
			if len(ls) < 20 {
				t.Errorf("at %v only %d controls are on show", size, len(ls))
			}
			for _, o := range overlaps(w.Canvas()) {
				t.Errorf("at %v: %s", size, o)
			}
		}
		w.Resize(fyne.NewSize(1280, 800))
	})
}
