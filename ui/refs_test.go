package ui

import (
	"image"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/test"

	"h3studio/media"
)

// flatPNG writes a w x h picture of one colour named name in dir.
func flatPNG(t testing.TB, dir, name string, c color.NRGBA) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 96, 64))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	p := filepath.Join(dir, name)
	writePNG(t, p, img)
	return p
}

// dropOn drops paths at the middle of o, as a Finder drop onto it.
func (h *harness) dropOn(o fyne.CanvasObject, paths ...string) {
	var uris []fyne.URI
	for _, p := range paths {
		uris = append(uris, storage.NewFileURI(p))
	}
	h.run(func() {
		pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(o).Add(fyne.NewPos(o.Size().Width/2, o.Size().Height/2))
		h.s.OnDropped(pos, uris)
	})
}

// anchors are the paths in the first and last frame slots ("" when empty).
func (h *harness) anchors() (first, last string) {
	h.run(func() {
		if h.s.first.item != nil {
			first = h.s.first.item.Path
		}
		if h.s.last.item != nil {
			last = h.s.last.item.Path
		}
	})
	return first, last
}

// In first & last frame mode a drop goes to the slot it lands on; several
// pictures fill that slot and then the next free one, and the notice says
// which file went where and which was not added.
func TestAnchorDropLandsOnItsSlot(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	red := flatPNG(t, dir, "red.png", color.NRGBA{255, 0, 0, 255})
	blue := flatPNG(t, dir, "blue.png", color.NRGBA{0, 0, 255, 255})
	green := flatPNG(t, dir, "green.png", color.NRGBA{0, 255, 0, 255})
	var firstBox, lastBox fyne.CanvasObject
	h.run(func() {
		h.s.mode.SetSelected(modeAnchs)
		firstBox, lastBox = h.s.flView.Objects[0], h.s.flView.Objects[1]
	})

	h.dropOn(lastBox, red)
	h.waitSettled()
	if f, l := h.anchors(); f != "" || l != red {
		t.Fatalf("a drop on Last filled first=%q last=%q", f, l)
	}
	h.dropOn(firstBox, blue)
	h.waitSettled()
	if f, l := h.anchors(); f != blue || l != red {
		t.Fatalf("a drop on First filled first=%q last=%q", f, l)
	}
	// Onto a full First: it is replaced, Last is kept.
	h.dropOn(firstBox, green)
	h.waitSettled()
	if f, l := h.anchors(); f != green || l != red {
		t.Fatalf("a drop on a set First gave first=%q last=%q", f, l)
	}

	// Two pictures onto the one free slot: the slot takes the first of
	// them, the other is reported as not added.
	h.run(func() { h.s.last.set(nil) })
	h.dropOn(lastBox, blue, red)
	h.waitSettled()
	if f, l := h.anchors(); f != green || l != blue {
		t.Fatalf("two onto a free Last gave first=%q last=%q", f, l)
	}
	var notice string
	h.run(func() { notice = h.s.notice.Text })
	if strings.Contains(notice, "2 file") || !strings.Contains(notice, "blue.png") || !strings.Contains(notice, "Not added: red.png") {
		t.Errorf("notice after two onto one slot: %q", notice)
	}

	// Two onto First of an empty pair fill First, then Last.
	h.run(func() { h.s.first.set(nil); h.s.last.set(nil) })
	h.dropOn(firstBox, red, blue)
	h.waitSettled()
	if f, l := h.anchors(); f != red || l != blue {
		t.Fatalf("two onto an empty First gave first=%q last=%q", f, l)
	}
	h.run(func() { notice = h.s.notice.Text })
	if !strings.Contains(notice, "red.png as the first frame") || !strings.Contains(notice, "blue.png as the last frame") {
		t.Errorf("notice after two onto empty slots: %q", notice)
	}
}

// A reference the plan would refuse on its own (audio under 2 s) is not
// added: the notice names the file as the user named it, without its
// folder, and says why; the list stays as it was.
func TestDropRefusesShortAudio(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	short := filepath.Join(dir, "short.wav")
	if err := media.WriteWAV(short, tone(1)); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("not a picture\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.drop(short, notes)
	h.waitSettled()
	h.run(func() {
		if len(h.s.audio.items) != 0 {
			t.Errorf("a 1 s wav entered the audio list: %v", paths(h.s.audio.items))
		}
		n := h.s.notice.Text
		for _, want := range []string{"short.wav", "2 s", "notes.txt"} {
			if !strings.Contains(n, want) {
				t.Errorf("notice %q lacks %q", n, want)
			}
		}
		for _, bad := range []string{dir, "Short.wav", "Notes.txt", "ffprobe", "Invalid data"} {
			if strings.Contains(n, bad) {
				t.Errorf("notice %q has %q", n, bad)
			}
		}
	})
}

// When the system file dialog fails (zenity rejecting its arguments under
// a missing locale), Add… says so in one sentence and opens Fyne's own
// file dialog instead of doing nothing.
func TestAddFilesDialogFailureFallsBack(t *testing.T) {
	bin := t.TempDir()
	fake := filepath.Join(bin, "zenity")
	script := "#!/bin/sh\necho 'This option is not available. Please see --help for all possible usages.' >&2\nexit 255\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	h := newHarness(t)
	h.run(h.s.AddFiles)
	h.waitFor("the dialog failure to show", 20*time.Second, func() bool {
		return h.s.win.Canvas().Overlays().Top() != nil
	})
	h.run(func() {
		n := h.s.notice.Text
		if !strings.Contains(n, "file dialog") || strings.Contains(n, "This option") || strings.Count(n, ".") > 1 {
			t.Errorf("notice %q: want one sentence about the file dialog", n)
		}
	})
}

// Dragging a reference row up or down the list moves it there: the
// labels renumber and the request follows the new order.
func TestDragReordersReferences(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	a := flatPNG(t, dir, "a.png", color.NRGBA{255, 0, 0, 255})
	b := flatPNG(t, dir, "b.png", color.NRGBA{0, 255, 0, 255})
	c := flatPNG(t, dir, "c.png", color.NRGBA{0, 0, 255, 255})
	h.drop(a, b, c)
	h.waitSettled()
	h.run(func() {
		row := h.s.images.box.Objects[1] // header, then Picture 1
		at := fyne.CurrentApp().Driver().AbsolutePositionForObject(row)
		// A point on the row's name, clear of its buttons.
		test.Drag(h.s.win.Canvas(), at.Add(fyne.NewPos(row.Size().Width/3, 8)), 0, 2*row.Size().Height+2)
	})
	h.waitSettled()
	h.run(func() {
		if got := paths(h.s.images.items); len(got) != 3 || got[0] != b || got[1] != c || got[2] != a {
			t.Fatalf("after dragging Picture 1 two rows down: %v", got)
		}
		req, err := h.s.Request()
		if err != nil {
			t.Fatal(err)
		}
		if req.References[2].Path != a {
			t.Errorf("request order %v", req.References)
		}
	})
}
