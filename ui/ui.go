// Package ui is H3 Studio's Fyne front end. It talks only to package app;
// engine work runs off the UI goroutine and reaches widgets via fyne.Do.
package ui

import (
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"h3studio/app"
	"h3studio/resources"
)

// AppID is the bundle identifier, shared with FyneApp.toml.
const AppID = "com.h3studio.app"

// Options configures Run. The zero value opens the window until the user
// closes it.
type Options struct {
	// QuitAfter closes the window after this long when positive; smoke
	// tests use it to check that the window opens and closes cleanly.
	QuitAfter time.Duration
}

// Run opens the studio window and blocks until it is closed.
func Run(opts Options) error {
	a := fyneapp.NewWithID(AppID)
	a.SetIcon(resources.Icon)
	w := NewMainWindow(a)
	if opts.QuitAfter > 0 {
		go func() {
			time.Sleep(opts.QuitAfter)
			fyne.Do(a.Quit)
		}()
	}
	w.ShowAndRun()
	return nil
}

// NewMainWindow builds the studio window on a (the real app or Fyne's test
// app) without showing it.
func NewMainWindow(a fyne.App) fyne.Window {
	w := a.NewWindow("H3 Studio " + app.Version)
	w.SetContent(newHome())
	w.Resize(fyne.NewSize(1100, 720))
	w.SetMaster()
	return w
}
