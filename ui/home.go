package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
)

// newHome is the window's first screen: the product name and the headless
// commands the same core offers, so a user knows what the binary can do.
func newHome() fyne.CanvasObject {
	title := widget.NewLabelWithStyle("H3 Studio", fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	sub := widget.NewLabelWithStyle("MiniMax-H3 video with a synchronized stereo soundtrack, on your Mac.",
		fyne.TextAlignCenter, fyne.TextStyle{})
	list := container.NewVBox()
	for _, c := range app.Commands() {
		list.Add(widget.NewLabel("h3studio " + c.Name + " - " + c.Summary))
	}
	return container.NewVBox(title, sub, widget.NewSeparator(), list)
}
