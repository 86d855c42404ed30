package ui

import (
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"h3studio/app"
)

// presetTitles are the preset picker's options for presets.
func presetTitles(presets []app.Preset) []string {
	var out []string
	for _, p := range presets {
		out = append(out, presetTitle(p.Name))
	}
	return out
}

// With no model folder the window opens on the built-in demo model's
// canvas, length and presets; choosing a snapshot that declares none
// brings the release's length and presets back (fields the user left
// alone), and the canvas the user changed stays.
func TestWindowDefaultsFollowTheModel(t *testing.T) {
	h := newHarnessOn(t, "")
	demo, err := h.rd.Defaults("")
	if err != nil {
		t.Fatal(err)
	}
	if !demo.Declared {
		t.Fatal("the built-in demo model declares no defaults (its h3studio.json)")
	}
	shows := func(d app.Defaults) func() bool {
		return func() bool {
			return h.s.ed.width.Text == strconv.Itoa(d.Width) && h.s.ed.height.Text == strconv.Itoa(d.Height) &&
				slices.Equal(h.s.ed.preset.Options, presetTitles(d.Presets))
		}
	}
	h.waitFor("the demo model's defaults", 30*time.Second, shows(demo))
	h.run(func() {
		if h.s.ed.unit.Selected != unitFrames || h.s.ed.length.Text != strconv.Itoa(demo.Frames) {
			t.Errorf("length %s %s, want the demo's %d frames", h.s.ed.length.Text, h.s.ed.unit.Selected, demo.Frames)
		}
		if h.s.ed.preset.Selected != defaultPreset {
			t.Errorf("preset %q, want %q", h.s.ed.preset.Selected, defaultPreset)
		}
		h.s.ed.height.SetText("96") // the user's own height
	})
	h.waitSettled()
	h.run(func() {
		r, err := h.s.Request()
		if err != nil || r.Model != "" || r.Width != demo.Width || r.Height != 96 {
			t.Errorf("request %+v, %v; want no model, the demo's width and the typed height", r, err)
		}
		if want := strconv.Itoa(demo.Width) + "x96"; h.s.shown == nil || h.s.shown.Canvas.String() != want {
			t.Errorf("the plan on show is %+v, want canvas %s", h.s.shown, want)
		}
	})

	tiny := filepath.Join(t.TempDir(), "tiny")
	if code := app.Main([]string{"tiny-model", "--out", tiny}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("tiny-model: exit %d", code)
	}
	h.run(func() { h.s.applySettings(tiny, h.out, 0) })
	release := app.ReleaseDefaults
	h.waitFor("the release's presets", 30*time.Second, func() bool {
		return slices.Equal(h.s.ed.preset.Options, presetTitles(release.Presets))
	})
	h.run(func() {
		e := h.s.ed
		// The canvas is one choice: a typed height keeps the width with it.
		if e.width.Text != strconv.Itoa(demo.Width) || e.height.Text != "96" {
			t.Errorf("canvas %sx%s, want the canvas the user made, %dx96", e.width.Text, e.height.Text, demo.Width)
		}
		if e.unit.Selected != unitSeconds || e.length.Text != defaultSeconds {
			t.Errorf("length %s %s, want the window's %s seconds", e.length.Text, e.unit.Selected, defaultSeconds)
		}
	})
}

// A restored request's canvas and length are the user's: another model's
// defaults leave them.
func TestRestoredFieldsOutliveModelDefaults(t *testing.T) {
	h := newHarnessOn(t, "")
	demo, err := h.rd.Defaults("")
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("the demo model's presets", 30*time.Second, func() bool {
		return slices.Equal(h.s.ed.preset.Options, presetTitles(demo.Presets))
	})
	h.run(func() { h.s.restore(app.Request{Prompt: "a fox", Width: 256, Height: 192, Frames: 39}, "") })
	tiny := filepath.Join(t.TempDir(), "tiny")
	if code := app.Main([]string{"tiny-model", "--out", tiny}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("tiny-model: exit %d", code)
	}
	h.run(func() { h.s.applySettings(tiny, h.out, 0) })
	h.waitFor("the release's presets", 30*time.Second, func() bool {
		return slices.Equal(h.s.ed.preset.Options, presetTitles(app.ReleaseDefaults.Presets))
	})
	h.run(func() {
		e := h.s.ed
		if e.width.Text != "256" || e.height.Text != "192" || e.unit.Selected != unitFrames || e.length.Text != "39" {
			t.Errorf("after the model change: %sx%s, %s %s; want the restored 256x192, 39 frames",
				e.width.Text, e.height.Text, e.length.Text, e.unit.Selected)
		}
	})
}
