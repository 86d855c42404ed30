package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// The window must fit a 1280x800 laptop with room to spare: its minimum
// (the content's MinSize, which the window manager enforces) stays within
// minWindow whatever the editor shows, because every part that can grow
// (the editor with Advanced open, the notice, the lists) scrolls instead
// of growing the window.
var minWindow = fyne.NewSize(1024, 700)

// noticeLines is how many lines of a notice show before it scrolls.
const noticeLines = 3

// centerColumn is the editor over the viewer in a split the user can
// drag: the editor scrolls, Render and the progress stay in sight below it.
func (s *Studio) centerColumn() fyne.CanvasObject {
	// One row for the buttons and the progress, so the editor keeps the
	// height: at 1280x800 it shows whole above a viewer of ~300 px. The
	// memory meter takes a line under it only while a render runs: the
	// row has no width to spare (the bar is ~100 px during a render).
	controls := container.NewVBox(
		container.NewBorder(nil, nil, container.NewHBox(s.renderBtn, s.cancelBtn, s.phase), s.eta, s.progress),
		s.meter.label, s.reason)
	s.edScroll = container.NewVScroll(s.ed.view())
	top := container.NewBorder(nil, controls, nil, nil, s.edScroll)
	// A line that appears or goes changes the controls' height, which
	// only a layout of the editor's column takes in.
	s.meter.relayout = top.Refresh
	split := container.NewVSplit(top, s.stage)
	split.Offset = 0.6
	return split
}

// noticeBox shows a notice in a fixed number of lines, scrolling a longer
// one, so that a long error does not push the window past the screen.
func noticeBox(l *widget.Label) fyne.CanvasObject {
	probe := widget.NewLabel("")
	for i := 1; i < noticeLines; i++ {
		probe.Text += "\n"
	}
	sc := container.NewVScroll(l)
	sc.SetMinSize(fyne.NewSize(0, probe.MinSize().Height))
	return sc
}
