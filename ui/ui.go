// Package ui is H3 Studio's Fyne front end: the studio window where a
// creator drops references, edits the request while the planner's verdict
// updates live, renders with per-step previews and scrubs the finished clip
// on a timeline. It drives package app's core (request, planner, job queue,
// history) and never runs engine work on the UI goroutine: workers hand
// updates to an injected executor (fyne.Do in the app, a serial executor in
// tests), coalesced to the display rate.
package ui

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"h3studio/app"
	"h3studio/engine/plan"
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
// app) without showing it, wired to the real core: the built-in demo model
// unless a snapshot is chosen, history and cache in the app's storage,
// clips in the user's Movies folder.
func NewMainWindow(a fyne.App) fyne.Window {
	return newMainWindow(a, Executor{Do: fyne.Do, DoAndWait: fyne.DoAndWait})
}

func newMainWindow(a fyne.App, exec Executor) fyne.Window {
	cfg, closeCore := DefaultConfig(a)
	cfg.Exec = exec
	s := NewStudio(a, cfg)
	w := s.Window()
	w.SetMaster()
	w.SetOnClosed(func() {
		s.Close()
		closeCore()
	})
	return w
}

// DefaultConfig is the production wiring of the studio to the app core.
// The returned function releases the engines when the window closes.
func DefaultConfig(a fyne.App) (Config, func()) {
	root := a.Storage().RootURI().Path()
	hist, err := app.OpenHistory(filepath.Join(root, "history"))
	if err != nil {
		// A broken history folder must not stop the app; this session's
		// renders are kept in a fresh folder instead.
		tmp, terr := os.MkdirTemp("", "h3studio-history-")
		if terr == nil {
			hist, err = app.OpenHistory(tmp)
		}
		if err != nil {
			hist = nil
		}
	}
	rd := &app.Renderer{CacheDir: filepath.Join(root, "cache"), HistoryDir: filepath.Join(root, "history"), Preview: true}
	// The first start measures this machine for the time estimates; a
	// failure leaves the estimates on the chip's peak.
	go func() {
		if err := rd.CalibrateOnce(context.Background(), "auto"); err != nil {
			slog.Warn("calibration failed", "err", err)
		}
	}()
	return coreConfig(rd, hist, outputDir(root)), rd.Close
}

// coreConfig wires the studio to a renderer, a history and an output
// folder as the app does. Renders run below the window's priority, so
// that typing and clicks during a render are answered at once.
func coreConfig(rd *app.Renderer, hist *app.History, out string) Config {
	return Config{
		Exec:         Executor{Do: fyne.Do, DoAndWait: fyne.DoAndWait},
		Render:       app.InBackground(rd.Render),
		Plan:         PlanWith(rd),
		History:      hist,
		OutputDir:    out,
		Machine:      "auto",
		SetMemoryGB:  rd.SetMemoryGB,
		LoadSound:    LoadSound,
		Memory:       rd.MemoryNow,
		LoRACoverage: rd.LoRACoverage,
		Defaults:     rd.Defaults,
	}
}

// outputDir is ~/Movies/H3 Studio, or the app's storage when there is no
// home folder.
func outputDir(root string) string {
	if home, err := os.UserHomeDir(); err == nil {
		d := filepath.Join(home, "Movies", "H3 Studio")
		if os.MkdirAll(d, 0o755) == nil {
			return d
		}
	}
	d := filepath.Join(root, "renders")
	_ = os.MkdirAll(d, 0o755) // a failure shows up as the planner's output-folder sentence
	return d
}

// PlanWith plans requests with the renderer that will run them, so the
// window shows exactly the plan a render would execute.
func PlanWith(rd *app.Renderer) PlanFunc {
	return func(ctx context.Context, req app.Request) (*plan.Plan, error) {
		job, err := rd.Prepare(ctx, req)
		var refused *app.RefusedError
		if errors.As(err, &refused) {
			return refused.Plan, nil
		}
		if err != nil {
			return nil, err
		}
		return job.Plan, nil
	}
}
