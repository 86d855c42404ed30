package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"h3studio/app"
)

// File › Save Clip As… (⇧⌘S) saves a whole copy of the clip on the
// timeline and refuses to replace the clip itself; File › Copy Clip Path
// (⌥⌘C) puts the clip's path on the clipboard. Before any clip both say
// there is none.
func TestSaveClipAsAndCopyPath(t *testing.T) {
	h := newHarness(t)
	saveAs := menuItem(t, h.s, "File", "Save Clip As…")
	sc, ok := saveAs.Shortcut.(*desktop.CustomShortcut)
	if !ok || sc.KeyName != fyne.KeyS || sc.Modifier != fyne.KeyModifierShortcutDefault|fyne.KeyModifierShift {
		t.Fatalf("Save Clip As… shortcut %#v, want Shift+Shortcut+S", saveAs.Shortcut)
	}
	copyPath := menuItem(t, h.s, "File", "Copy Clip Path")
	canvas := h.s.Window().Canvas().(fyne.Shortcutable)

	h.run(func() { canvas.TypedShortcut(copyPathShortcut) })
	h.waitFor("the no-clip notice", 5*time.Second, func() bool { return h.s.notice.Text == app.NoClipText })

	src := filepath.Join(h.out, "h3-clip.mp4")
	body := strings.Repeat("clip ", 50_000)
	if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	h.run(func() { h.s.lastOutput = src })

	dst := filepath.Join(t.TempDir(), "fox.mp4")
	h.run(func() { h.s.SaveClipTo(dst) })
	h.waitFor("the saved notice", 10*time.Second, func() bool { return h.s.notice.Text == app.SavedText(dst) })
	if got, err := os.ReadFile(dst); err != nil || string(got) != body {
		t.Fatalf("the saved copy: %d bytes (%v), want %d", len(got), err, len(body))
	}

	h.run(func() { h.s.SaveClipTo(src) })
	h.waitFor("the refusal", 10*time.Second, func() bool {
		return strings.HasPrefix(h.s.notice.Text, "The clip cannot replace itself")
	})
	if got, err := os.ReadFile(src); err != nil || string(got) != body {
		t.Fatal("saving over the clip changed it")
	}

	h.run(copyPath.Action)
	var clip string
	h.run(func() { clip = h.s.app.Clipboard().Content() })
	if clip != src {
		t.Fatalf("clipboard %q, want the clip's path %q", clip, src)
	}
	h.run(func() { h.s.app.Clipboard().SetContent("") })
	h.run(func() { canvas.TypedShortcut(copyPathShortcut) })
	h.run(func() { clip = h.s.app.Clipboard().Content() })
	if clip != src {
		t.Fatalf("after ⌥⌘C the clipboard holds %q, want %q", clip, src)
	}
}
