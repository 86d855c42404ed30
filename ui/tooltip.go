package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// Fyne 2.7 has no tooltips, and a PopUp would not do: it is an overlay
// that takes the next click (dismissing itself instead of pressing the
// button under it) and the hover events. The tip is drawn instead in a
// layer stacked over the window's content that is neither tappable nor
// hoverable, so every event still reaches the widgets below.

// tipLayer draws the tooltip of the button under the pointer.
type tipLayer struct {
	box    *fyne.Container // no layout: the bubble sits where show puts it
	bubble *fyne.Container
	label  *widget.Label
}

func newTipLayer() *tipLayer {
	l := &tipLayer{label: widget.NewLabel("")}
	bg := canvas.NewRectangle(theme.Color(theme.ColorNameOverlayBackground))
	bg.StrokeColor = theme.Color(theme.ColorNameInputBorder)
	bg.StrokeWidth = 1
	bg.CornerRadius = theme.InputRadiusSize()
	l.bubble = container.NewStack(bg, l.label)
	l.bubble.Hide()
	l.box = container.NewWithoutLayout(l.bubble)
	return l
}

// over stacks the layer over content.
func (l *tipLayer) over(content fyne.CanvasObject) fyne.CanvasObject {
	return container.NewStack(content, l.box)
}

// show puts the tip below o (above it near the window's bottom), kept
// inside the window.
func (l *tipLayer) show(o fyne.CanvasObject, tip string) {
	d := fyne.CurrentApp().Driver()
	l.label.SetText(tip)
	size := l.bubble.MinSize()
	l.bubble.Resize(size)
	origin := d.AbsolutePositionForObject(l.box)
	at := d.AbsolutePositionForObject(o).Subtract(origin)
	room := l.box.Size()
	pos := fyne.NewPos(at.X, at.Y+o.Size().Height+2)
	if pos.Y+size.Height > room.Height {
		pos.Y = at.Y - size.Height - 2
	}
	pos.X = max(0, min(pos.X, room.Width-size.Width))
	l.bubble.Move(pos)
	l.bubble.Show()
	l.box.Refresh()
}

func (l *tipLayer) hide() {
	l.label.SetText("")
	l.bubble.Hide()
}

// text is the tip on show ("" when none).
func (l *tipLayer) text() string {
	if !l.bubble.Visible() {
		return ""
	}
	return l.label.Text
}

// tipButton is an icon-only button that says what it does on hover.
type tipButton struct {
	widget.Button
	tip    string
	layer  *tipLayer
	showed bool
}

// newTipButton is an icon button with a tooltip drawn in layer.
func newTipButton(icon fyne.Resource, tip string, layer *tipLayer, tapped func()) *tipButton {
	b := &tipButton{tip: tip, layer: layer}
	b.Icon = icon
	b.OnTapped = tapped
	b.ExtendBaseWidget(b)
	return b
}

// MouseIn shows the tip as the button lights up.
func (b *tipButton) MouseIn(e *desktop.MouseEvent) {
	b.Button.MouseIn(e)
	if b.layer != nil && b.tip != "" {
		b.layer.show(b, b.tip)
		b.showed = true
	}
}

// MouseOut takes the tip away.
func (b *tipButton) MouseOut() {
	b.Button.MouseOut()
	b.hideTip()
}

// Tapped hides the tip first: the button's action may move or remove it.
func (b *tipButton) Tapped(e *fyne.PointEvent) {
	b.hideTip()
	b.Button.Tapped(e)
}

func (b *tipButton) hideTip() {
	if b.showed {
		b.layer.hide()
		b.showed = false
	}
}
