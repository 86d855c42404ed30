package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"h3studio/app"
	"h3studio/app/download/hubtest"
	"h3studio/engine/weights"
)

// "Get MiniMax-H3…" in Settings downloads a snapshot from the hub with
// its progress in the dialog, and selects the folder in Settings and in
// the preferences once the download is validated.
func TestGetModelFromSettings(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	if err := weights.WriteTiny(src, weights.TinyOptions{Seed: 5}); err != nil {
		t.Fatal(err)
	}
	hub, err := hubtest.New(app.DefaultRepo, src)
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	app.SetHub(hub.Hub.URL, "")
	defer app.SetHub("", "")

	h := newHarness(t)
	dst := filepath.Join(t.TempDir(), "MiniMax-H3")
	h.run(func() {
		h.s.ShowSettings()
		test.Tap(h.s.settings.get)
	})
	h.run(func() {
		g := h.s.getModel
		g.part.SetSelectedIndex(1) // FL2VA only
		g.dir.SetText(dst)
		test.Tap(g.start)
	})
	h.waitFor("the download to finish", 60*time.Second, func() bool { return !h.s.getModel.start.Disabled() })
	h.run(func() {
		g := h.s.getModel
		if !strings.HasPrefix(g.status.Text, "Done:") || g.bar.Value != 1 {
			t.Errorf("status %q, bar %g", g.status.Text, g.bar.Value)
		}
		if h.s.model != dst || h.s.settings.model.Text != dst || h.s.app.Preferences().String(prefModel) != dst {
			t.Errorf("model %q, settings field %q, preference %q; want %s", h.s.model, h.s.settings.model.Text, h.s.app.Preferences().String(prefModel), dst)
		}
	})
	if _, err := os.Stat(filepath.Join(dst, "Ref2VA")); err == nil {
		t.Error("FL2VA only also fetched Ref2VA")
	}
	if _, err := weights.Describe(dst); err != nil {
		t.Error(err)
	}
}
