package ui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
)

// buttons lists the buttons under o, depth first.
func buttons(o fyne.CanvasObject) []*widget.Button {
	var out []*widget.Button
	switch v := o.(type) {
	case *widget.Button:
		out = append(out, v)
	case *tipButton:
		out = append(out, &v.Button)
	case *dragRow:
		out = append(out, buttons(v.content)...)
	case *fyne.Container:
		for _, c := range v.Objects {
			out = append(out, buttons(c)...)
		}
	}
	return out
}

// buttonWith finds the button under o showing icon or text.
func buttonWith(t testing.TB, o fyne.CanvasObject, icon fyne.Resource, text string) *widget.Button {
	t.Helper()
	for _, b := range buttons(o) {
		if (icon != nil && b.Icon != nil && b.Icon.Name() == icon.Name()) || (text != "" && b.Text == text) {
			return b
		}
	}
	t.Fatalf("no button %v %q", icon, text)
	return nil
}

func TestMainWindowOpensAndCloses(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // the default clip folder is ~/Movies/H3 Studio
	a := test.NewTempApp(t)
	ui := newSerial(t)
	ui.DoAndWait(func() {
		w := newMainWindow(a, ui.exec())
		w.Show()
		if got := w.Title(); !strings.HasPrefix(got, "H3 Studio") {
			t.Errorf("title %q", got)
		}
		if w.Content() == nil {
			t.Error("window has no content")
		}
		w.Close()
	})
}

// Drop three files, see each in the list of its kind with the label the
// model gives it, reorder, and see the request and the plan follow.
func TestDropReorderLabelsAndPlan(t *testing.T) {
	h := newHarness(t)
	still, clip, voice := fixtures(t)
	h.drop(still, clip, voice)
	h.waitSettled()
	h.run(func() {
		for _, c := range []struct {
			l     *refList
			label string
			path  string
			kind  string
		}{{h.s.images, "Picture 1", still, app.RefImage}, {h.s.videos, "Video 1", clip, app.RefVideoAudio}, {h.s.audio, "Audio 1", voice, app.RefAudio}} {
			if len(c.l.items) != 1 || c.l.items[0].Path != c.path || c.l.items[0].Kind != c.kind || c.l.labelOf(0) != c.label {
				t.Errorf("%s list: %+v", c.label, c.l.items)
			}
		}
		if !strings.Contains(h.s.plan.refs.Text, "Picture 1:") || !strings.Contains(h.s.plan.refs.Text, "Video 1:") || !strings.Contains(h.s.plan.refs.Text, "Audio 1:") {
			t.Errorf("plan panel references: %q", h.s.plan.refs.Text)
		}
		if !h.s.fits || h.s.renderBtn.Disabled() {
			t.Errorf("three small references should fit: %q", h.s.reason.Text)
		}
	})
	h.run(func() {
		test.AssertRendersToMarkup(t, "references.xml", h.s.Window().Canvas())
		test.AssertRendersToImage(t, "references.png", h.s.Window().Canvas())
	})

	checkReorder(t, h, still, clip, voice)
	checkPanelIsCorePlan(t, h, still)
}

// checkReorder: a second, larger picture becomes Picture 2; moving it up
// swaps the labels, the request order and the plan's canvases.
func checkReorder(t *testing.T, h *harness, still, clip, voice string) {
	t.Helper()
	wide := filepath.Join(t.TempDir(), "wide.png")
	copyPNG(t, still, wide, 1200, 400)
	h.drop(wide)
	h.waitSettled()
	var before string
	h.run(func() {
		if len(h.s.images.items) != 2 || h.s.images.items[1].Path != wide {
			t.Fatalf("images after second drop: %v", paths(h.s.images.items))
		}
		before = h.s.plan.refs.Text
		row := h.s.images.box.Objects[2] // header, Picture 1, Picture 2
		test.Tap(buttonWith(t, row, theme.MoveUpIcon(), ""))
	})
	h.waitSettled()
	h.run(func() {
		if got := paths(h.s.images.items); got[0] != wide || got[1] != still {
			t.Fatalf("after moving Picture 2 up: %v", got)
		}
		req, err := h.s.Request()
		if err != nil {
			t.Fatal(err)
		}
		want := []string{wide, still, clip, voice}
		for i, r := range req.References {
			if r.Path != want[i] {
				t.Errorf("request reference %d = %s, want %s", i+1, r.Path, want[i])
			}
		}
		if h.s.plan.refs.Text == before {
			t.Errorf("the plan did not follow the reorder: %q", before)
		}
	})
}

// checkPanelIsCorePlan: the panel shows exactly the core's plan of the
// same request, and deleting Picture 1 renumbers the other.
func checkPanelIsCorePlan(t *testing.T, h *harness, still string) {
	t.Helper()
	var req app.Request
	h.run(func() { req, _ = h.s.Request() })
	p, err := h.s.cfg.Plan(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	h.run(func() {
		if p.References[0].Canvas.String() == p.References[1].Canvas.String() {
			t.Fatalf("fixture pictures should plan to different canvases: %v", p.References)
		}
		lines := strings.Split(h.s.plan.refs.Text, "\n")
		for i, rp := range p.References {
			if rp.Canvas.Width > 0 && !strings.Contains(lines[i], rp.Canvas.String()) {
				t.Errorf("plan line %d %q lacks canvas %s", i, lines[i], rp.Canvas)
			}
		}
		if !strings.HasPrefix(lines[0], "Picture 1:") {
			t.Errorf("first plan line %q", lines[0])
		}
		// Deleting Picture 1 renumbers the other.
		test.Tap(buttonWith(t, h.s.images.box.Objects[1], theme.DeleteIcon(), ""))
		if len(h.s.images.items) != 1 || h.s.images.items[0].Path != still {
			t.Errorf("after delete: %v", paths(h.s.images.items))
		}
	})
}

func paths(items []*refItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, it.Path)
	}
	return out
}

// A canvas over the model's pixel cap disables Render, with the planner's
// reason and its repair; a valid size enables it again.
func TestLimitDisablesRender(t *testing.T) {
	h := newHarness(t)
	h.waitSettled()
	h.run(func() {
		test.AssertRendersToMarkup(t, "empty.xml", h.s.Window().Canvas())
		test.AssertRendersToImage(t, "empty.png", h.s.Window().Canvas())
	})
	h.run(func() {
		if h.s.renderBtn.Disabled() {
			t.Fatalf("default request should fit: %q", h.s.reason.Text)
		}
		h.s.ed.width.SetText("1024")
		h.s.ed.height.SetText("1344")
	})
	h.waitSettled()
	h.run(func() {
		if !h.s.renderBtn.Disabled() {
			t.Error("Render enabled for a canvas over the cap")
		}
		if r := h.s.reason.Text; !strings.Contains(r, "over the model's cap") || !strings.Contains(r, "768x1024") {
			t.Errorf("reason %q", r)
		}
		h.s.Render() // a shortcut must not bypass the button's state
		if len(h.s.queue.Jobs()) != 0 {
			t.Error("a refused request was queued")
		}
		h.s.ed.width.SetText("wide")
	})
	h.waitSettled()
	h.run(func() {
		if !h.s.renderBtn.Disabled() || !strings.Contains(h.s.reason.Text, "Width must be a whole number") {
			t.Errorf("bad width: disabled %v, reason %q", h.s.renderBtn.Disabled(), h.s.reason.Text)
		}
		h.s.ed.width.SetText("768")
	})
	h.waitSettled()
	h.run(func() {
		if h.s.renderBtn.Disabled() || h.s.reason.Text != "" {
			t.Errorf("768x1344 should fit: %q", h.s.reason.Text)
		}
	})
}

// Reuse restores a past request from the history: fields and references.
func TestRestoreHistoryEntry(t *testing.T) {
	h := newHarness(t)
	still, clip, _ := fixtures(t)
	past := app.Request{Prompt: "a heron lands on a jetty", Width: 384, Height: 256, Frames: 39, Seed: 1234, Preset: "balanced", Steps: 12, Layers: 45,
		References: []app.Reference{{Kind: app.RefVideo, Path: clip}, {Kind: app.RefImage, Path: still}}}
	raw, err := json.Marshal(past)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.s.cfg.History.Put(app.Entry{ID: "past-1", Status: app.StatusDone, Created: time.Unix(1_700_000_000, 0), Request: raw}); err != nil {
		t.Fatal(err)
	}
	h.run(h.s.refreshHistory)
	h.waitFor("the history entry", 10*time.Second, func() bool { return len(buttons(h.s.histBox)) > 0 })
	h.run(func() { test.Tap(buttonWith(t, h.s.histBox, theme.HistoryIcon(), "")) })
	h.waitSettled()
	h.run(func() {
		got, err := h.s.Request()
		if err != nil {
			t.Fatal(err)
		}
		if got.Prompt != past.Prompt || got.Width != 384 || got.Height != 256 || got.Frames != 39 || got.Seed != 1234 || got.Preset != "balanced" ||
			got.Steps != 12 || got.Layers != 0 {
			// Layers 45 is the preset's own: the field stays empty and the
			// preset supplies it.
			t.Errorf("restored %+v", got)
		}
		if len(got.References) != 2 || got.References[0].Path != still || got.References[1].Path != clip || got.References[1].Kind != app.RefVideo {
			// Pictures come first in the model's order (Picture 1, Video 1).
			t.Errorf("restored references %+v", got.References)
		}
	})
}

// copyPNG writes a w x h version of src to dst.
func copyPNG(t testing.TB, src, dst string, w, h int) {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := decodePNG(f)
	if err != nil {
		t.Fatal(err)
	}
	writePNG(t, dst, resizeNN(img, w, h))
}

// A model folder that is not a snapshot disables Render with a sentence
// that says what to do; the last request comes back on the next start.
func TestModelFolderAndLastRequest(t *testing.T) {
	h := newHarness(t)
	h.waitSettled()
	h.run(func() {
		h.s.model = filepath.Join(t.TempDir(), "missing")
		h.s.edited()
	})
	h.waitSettled()
	h.run(func() {
		if !h.s.renderBtn.Disabled() || !strings.Contains(h.s.reason.Text, "is not a folder") {
			t.Errorf("missing model folder: disabled %v, reason %q", h.s.renderBtn.Disabled(), h.s.reason.Text)
		}
		h.s.model = ""
		h.s.rememberRequest(app.Request{Prompt: "remembered", Width: 320, Height: 192, Seconds: 1.5, Seed: 9, Preset: "fast"})
	})
	var again *Studio
	h.run(func() { again = NewStudio(h.s.app, h.s.cfg) })
	h.waitFor("the second window to plan", 30*time.Second, func() bool { return again.Settled() })
	h.run(func() {
		r, err := again.Request()
		if err != nil || r.Prompt != "remembered" || r.Width != 320 || r.Height != 192 || r.Seconds != 1.5 || r.Seed != 9 || r.Preset != "fast" {
			t.Errorf("restored last request %+v (%v)", r, err)
		}
		again.Close()
	})
}
