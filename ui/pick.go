package ui

import (
	"errors"
	"os"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"github.com/ncruces/zenity"

	"h3studio/app"
)

// mediaExts are the file types the open dialog offers.
var mediaExts = []string{".png", ".jpg", ".jpeg", ".webp", ".gif", ".bmp", ".tif", ".tiff",
	".mp4", ".mov", ".m4v", ".mkv", ".webm", ".wav", ".mp3", ".m4a", ".aac", ".flac", ".ogg"}

// mediaPatterns are mediaExts as dialog patterns in both cases. zenity's
// own CaseFold turns "k" into "[kKK]" with a Kelvin sign, which zenity
// rejects under a locale the C library lacks, so the cases are spelled out.
func mediaPatterns() []string {
	var out []string
	for _, e := range mediaExts {
		out = append(out, "*"+e, "*"+strings.ToUpper(e))
	}
	return out
}

// AddFiles opens the open dialog for several references.
func (s *Studio) AddFiles() {
	s.pickFiles("Add references", zenity.FileFilter{Name: "Pictures, videos and audio", Patterns: mediaPatterns()}, nil, s.AddPaths)
}

// pickFiles opens the system's open dialog (zenity: the native panel on
// macOS, GTK/Qt's on Linux) for several files of filter; where no dialog
// program exists, or it fails, it falls back to Fyne's own, which shows
// only files ending in one of exts (nil: all). The native dialog blocks,
// so it runs on its own goroutine; done gets the paths on the UI goroutine.
func (s *Studio) pickFiles(title string, filter zenity.FileFilter, exts []string, done func([]string)) {
	if !zenity.IsAvailable() {
		s.pickWithFyneDialog(exts, done)
		return
	}
	s.spawn(func() {
		paths, err := zenity.SelectFileMultiple(zenity.Title(title), zenity.Attach(os.Getpid()), zenity.FileFilters{filter})
		if errors.Is(err, zenity.ErrCanceled) {
			return
		}
		s.cfg.Exec.Do(func() {
			if err != nil {
				// The helper's own text (an exit status, a usage line)
				// means nothing to the user; what helps is a dialog.
				s.notice.SetText(app.FileDialogFailedText)
				s.pickWithFyneDialog(exts, done)
				return
			}
			done(paths)
		})
	})
}

// pickWithFyneDialog is pickFiles through Fyne's own open dialog (one file).
func (s *Studio) pickWithFyneDialog(exts []string, done func([]string)) {
	d := dialog.NewFileOpen(func(rc fyne.URIReadCloser, err error) {
		if err != nil {
			s.notice.SetText(app.FileDialogFailedText)
			return
		}
		if rc == nil {
			return // canceled
		}
		path := rc.URI().Path()
		if err := rc.Close(); err != nil { // opened only to learn the path
			s.notice.SetText(app.Advice(err))
		}
		done([]string{path})
	}, s.win)
	if exts != nil {
		d.SetFilter(storage.NewExtensionFileFilter(exts))
	}
	d.Show()
}
