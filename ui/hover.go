package ui

import (
	"image"
	"image/color"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// hoverThumbWidth and hoverThumbHeight bound the frame shown beside the
// scrub bar while the pointer hovers over it (editors' "scrub
// thumbnails"): 16:9, and as tall as the two-line time code beside it so
// the bar grows by little. Drawn over the picture, a larger one read as a
// ghost frame in the viewer.
const hoverThumbWidth, hoverThumbHeight = 96, 54

// scrubHover lies over the slider and only listens for the pointer: taps
// and drags still reach the slider beneath, as Fyne delivers each kind of
// event to the topmost object that handles it.
type scrubHover struct {
	widget.BaseWidget
	t *Timeline
}

func newScrubHover(t *Timeline) *scrubHover {
	h := &scrubHover{t: t}
	h.ExtendBaseWidget(h)
	return h
}

// CreateRenderer draws nothing; a transparent fill rather than nil, which
// Fyne's software painter (tests, screenshots) cannot draw.
func (h *scrubHover) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(canvas.NewRectangle(color.Transparent))
}

// MouseIn is part of desktop.Hoverable.
func (h *scrubHover) MouseIn(ev *desktop.MouseEvent) { h.MouseMoved(ev) }

// MouseMoved shows the frame under the pointer.
func (h *scrubHover) MouseMoved(ev *desktop.MouseEvent) {
	h.t.hoverAt(h.frameAt(ev.Position.X))
}

// MouseOut hides the thumbnail.
func (h *scrubHover) MouseOut() { h.t.hideHover() }

// frameAt maps an x over the slider to a frame with the slider's own
// geometry (its track is inset by the handle's radius plus inner padding).
func (h *scrubHover) frameAt(x float32) int {
	s := h.t.slider
	pad := trackInset(s)
	w := h.Size().Width - 2*pad
	if w <= 0 || h.t.store == nil {
		return 0
	}
	r := min(max((x-pad)/w, 0), 1)
	return int(r*float32(s.Max-s.Min) + float32(s.Min) + 0.5)
}

// hoverAt shows frame i in the thumbnail beside the slider.
func (t *Timeline) hoverAt(i int) {
	if t.store == nil || t.store.Len() == 0 {
		return
	}
	i = min(max(i, 0), t.store.Len()-1)
	var img image.Image
	var err error
	if t.proxy != nil {
		img, err = t.proxy.Frame(i)
	} else {
		img, err = t.frame(i)
	}
	if err != nil {
		return
	}
	t.hoverIndex = i
	t.hoverImg.Image = img
	t.hoverImg.Show()
	t.hoverImg.Refresh()
}

func (t *Timeline) hideHover() {
	t.hoverIndex = -1
	t.hoverImg.Hide()
}
