package ui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
)

// anchorWell holds one FL2VA anchor picture.
type anchorWell struct {
	title   string
	where   string // how messages name the slot: "the first frame"
	item    *refItem
	img     *canvas.Image
	label   *widget.Label
	box     *fyne.Container // the drop target
	changed func()
	tips    *tipLayer
}

func newAnchorWell(title, where string, changed func(), tips *tipLayer) *anchorWell {
	w := &anchorWell{title: title, where: where, changed: changed, img: canvas.NewImageFromImage(nil), label: widget.NewLabel("none"), tips: tips}
	w.img.FillMode = canvas.ImageFillContain
	w.img.SetMinSize(fyne.NewSize(160, 100))
	return w
}

func (w *anchorWell) view() fyne.CanvasObject {
	clear := newTipButton(theme.DeleteIcon(), "Remove the "+strings.ToLower(w.title), w.tips, func() { w.set(nil) })
	clear.Importance = widget.LowImportance
	head := container.NewBorder(nil, nil, widget.NewLabelWithStyle(w.title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), clear, w.label)
	w.box = container.NewVBox(head, w.img)
	return w.box
}

func (w *anchorWell) set(it *refItem) {
	w.item = it
	if it == nil {
		w.img.Image = nil
		w.label.SetText("none")
	} else {
		w.img.Image = it.Thumb
		w.label.SetText(app.RefFileName(it.Path) + "  " + describeMedia(it.Info))
	}
	w.img.Refresh()
	w.changed()
}

// contains reports whether the window position pos falls on the slot.
func (w *anchorWell) contains(pos fyne.Position) bool {
	if w.box == nil || !w.box.Visible() {
		return false
	}
	d := fyne.CurrentApp().Driver()
	if d == nil {
		return false
	}
	at, size := d.AbsolutePositionForObject(w.box), w.box.Size()
	return pos.X >= at.X && pos.Y >= at.Y && pos.X < at.X+size.Width && pos.Y < at.Y+size.Height
}

// slotAt is the frame slot under a drop at pos in first & last frame mode
// (nil elsewhere, or when the drop missed both).
func (s *Studio) slotAt(pos fyne.Position) *anchorWell {
	if s.mode.Selected != modeAnchs {
		return nil
	}
	for _, w := range []*anchorWell{s.first, s.last} {
		if w.contains(pos) {
			return w
		}
	}
	return nil
}

// freeSlots are the slots pictures go to, in order: the one a drop landed
// on (replacing its picture) and then the other while it is empty; with
// no target, the empty ones, first before last.
func (s *Studio) freeSlots(target *anchorWell) []*anchorWell {
	var out []*anchorWell
	if target != nil {
		out = append(out, target)
	}
	for _, w := range []*anchorWell{s.first, s.last} {
		if w != target && w.item == nil {
			out = append(out, w)
		}
	}
	return out
}

// place puts probed files where they belong and says so: in first & last
// frame mode pictures fill freeSlots(target) and anything else is not
// used; otherwise each file joins the list of its kind. added pairs a
// file name with where it went, in the lists' words.
func (s *Studio) place(items []*refItem, target *anchorWell) (added [][2]string, unplaced []*app.RefRejectedError) {
	anchors := s.mode.Selected == modeAnchs
	slots := s.freeSlots(target)
	for _, it := range items {
		name := app.RefFileName(it.Path)
		if !anchors {
			l := s.listFor(it.Kind)
			l.add(it)
			added = append(added, [2]string{name, l.labelOf(len(l.items) - 1)})
			continue
		}
		switch {
		case it.Kind != app.RefImage:
			unplaced = append(unplaced, &app.RefRejectedError{Name: name, Reason: app.AnchorsTakePictures})
		case len(slots) == 0:
			unplaced = append(unplaced, &app.RefRejectedError{Name: name, Reason: app.AnchorsFull})
		default:
			slots[0].set(it)
			added = append(added, [2]string{name, slots[0].where})
			slots = slots[1:]
		}
	}
	return added, unplaced
}

// listFor is the list that holds references of a kind.
func (s *Studio) listFor(kind string) *refList {
	switch kind {
	case app.RefImage:
		return s.images
	case app.RefAudio:
		return s.audio
	}
	return s.videos
}
