package ui

import (
	"errors"
	"os"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"github.com/ncruces/zenity"

	"h3studio/app"
)

// SaveClipAs asks where to save a copy of the clip on the timeline: the
// system's save panel (zenity), which asks before replacing a file; where
// there is none, Fyne's folder dialog, the clip keeping its name.
func (s *Studio) SaveClipAs() {
	src := s.lastOutput
	if src == "" {
		s.notice.SetText(app.NoClipText)
		return
	}
	if !zenity.IsAvailable() {
		s.saveWithFyneDialog(src)
		return
	}
	s.spawn(func() {
		dst, err := zenity.SelectFileSave(
			zenity.Title("Save clip as"),
			zenity.Attach(os.Getpid()),
			zenity.Filename(filepath.Join(saveFolder(src), filepath.Base(src))),
			zenity.ConfirmOverwrite(),
			zenity.FileFilters{{Name: "MP4 video", Patterns: []string{"*.mp4", "*.MP4"}}})
		if errors.Is(err, zenity.ErrCanceled) {
			return
		}
		s.cfg.Exec.Do(func() {
			if err != nil {
				s.notice.SetText(app.FileDialogFailedText)
				s.saveWithFyneDialog(src)
				return
			}
			s.saveClip(src, app.ClipSavePath(dst))
		})
	})
}

// saveFolder is where the save panel opens: the user's Movies folder when
// there is one (where a Mac keeps videos), else the clip's own.
func saveFolder(src string) string {
	if home, err := os.UserHomeDir(); err == nil {
		if st, err := os.Stat(filepath.Join(home, "Movies")); err == nil && st.IsDir() {
			return filepath.Join(home, "Movies")
		}
	}
	return filepath.Dir(src)
}

// saveWithFyneDialog picks a folder with Fyne's dialog. Fyne's own save
// dialog is not used: it creates the file before it returns, which would
// truncate the clip itself when the user picks its name.
func (s *Studio) saveWithFyneDialog(src string) {
	dialog.ShowFolderOpen(func(dir fyne.ListableURI, err error) {
		if err != nil {
			s.notice.SetText(app.FileDialogFailedText)
			return
		}
		if dir == nil {
			return // canceled
		}
		dst := filepath.Join(dir.Path(), filepath.Base(src))
		if _, err := os.Stat(dst); err != nil {
			s.saveClip(src, dst)
			return
		}
		dialog.ShowConfirm(app.ReplaceTitle, app.ReplaceText(dst), func(ok bool) {
			if ok {
				s.saveClip(src, dst)
			}
		}, s.win)
	}, s.win)
}

// SaveClipTo saves a copy of the clip on the timeline at dst, as Save As
// does once the user has chosen (scripts and tests call it directly).
func (s *Studio) SaveClipTo(dst string) {
	if s.lastOutput == "" {
		s.notice.SetText(app.NoClipText)
		return
	}
	s.saveClip(s.lastOutput, dst)
}

// saveClip copies off the UI goroutine (a clip is tens of megabytes) and
// says how it went.
func (s *Studio) saveClip(src, dst string) {
	s.spawn(func() {
		err := app.SaveClipAs(src, dst)
		s.cfg.Exec.Do(func() {
			if err != nil {
				s.notice.SetText(app.Advice(err))
				return
			}
			s.notice.SetText(app.SavedText(dst))
		})
	})
}

// CopyClipPath puts the path of the clip on the timeline on the clipboard.
// Fyne's clipboard holds text only, so the clip goes as its absolute path
// (what Finder's "Copy as Pathname" gives), not as a file.
func (s *Studio) CopyClipPath() {
	if s.lastOutput == "" {
		s.notice.SetText(app.NoClipText)
		return
	}
	p, err := filepath.Abs(s.lastOutput)
	if err != nil {
		p = s.lastOutput
	}
	s.app.Clipboard().SetContent(p)
	s.notice.SetText(app.CopiedPathText(p))
}
