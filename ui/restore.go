package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
)

// renderedClip is a dropped MP4 that carries the request it was made from.
type renderedClip struct {
	path string
	req  app.Request
}

// dropPaths adds dropped files as references, except a clip rendered by
// H3 Studio: for the first such clip the window offers to restore its
// settings instead (the clip is added as a reference when the user says
// no). Reading the clips' tags runs off the UI goroutine. target is the
// frame slot the drop landed on (nil: none).
func (s *Studio) dropPaths(paths []string, target *anchorWell) {
	var movies int
	for _, p := range paths {
		if isMovie(p) {
			movies++
		}
	}
	if movies == 0 {
		s.addPathsAt(paths, nil, target)
		return
	}
	s.loading++
	s.notice.SetText(fmt.Sprintf("Reading %d file(s)…", len(paths)))
	s.spawn(func() {
		var offer *renderedClip
		var refs []string
		for _, p := range paths {
			if offer == nil && isMovie(p) {
				ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
				req, ok, err := app.RequestFromClip(ctx, p)
				cancel()
				// A clip whose tag cannot be read is still a video; adding
				// it as a reference reports what is wrong with the file.
				if ok && err == nil {
					offer = &renderedClip{path: p, req: req}
					continue
				}
			}
			refs = append(refs, p)
		}
		s.cfg.Exec.Do(func() {
			s.loading--
			s.addPathsAt(refs, nil, target)
			if offer != nil {
				s.offerRestore(*offer)
			} else if len(refs) == 0 {
				s.notice.SetText("")
			}
		})
	})
}

// isMovie is whether a file may be an MP4 the studio rendered (checked by
// name, so pictures and audio never wait for FFprobe).
func isMovie(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".mp4", ".m4v", ".mov":
		return true
	}
	return false
}

// offerRestore asks whether to put a rendered clip's settings back into
// the editor or to use the clip as a reference video.
func (s *Studio) offerRestore(c renderedClip) {
	name := filepath.Base(c.path)
	msg := widget.NewLabel(fmt.Sprintf("%s was rendered by H3 Studio (seed %d, %dx%d).\n\n"+
		"Restore its prompt, seed, preset, canvas, length and references into the editor? "+
		"The request you are editing is replaced.\n\nOr use the clip as a reference video.",
		name, c.req.Seed, c.req.Width, c.req.Height))
	msg.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm("Restore settings from "+name+"?", "Restore", "Add as reference", msg, func(restore bool) {
		s.restoreDlg = nil
		if restore {
			s.restore(c.req, "Settings restored from "+name+".")
		} else {
			s.AddPaths([]string{c.path})
		}
	}, s.win)
	d.Resize(fyne.NewSize(520, 260))
	s.restoreDlg = d
	d.Show()
}

// RestoreOffered is whether the window is asking to restore a dropped
// clip's settings.
func (s *Studio) RestoreOffered() bool { return s.restoreDlg != nil }
