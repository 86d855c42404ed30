package ui

import (
	"errors"
	"os"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"github.com/ncruces/zenity"
)

// AddFiles opens the system's open dialog (zenity: the native panel on
// macOS, GTK/Qt's on Linux) for several references; where no dialog
// program exists it falls back to Fyne's own. The native dialog blocks,
// so it runs on its own goroutine.
func (s *Studio) AddFiles() {
	if !zenity.IsAvailable() {
		dialog.ShowFileOpen(func(rc fyne.URIReadCloser, err error) {
			if err != nil || rc == nil {
				return
			}
			path := rc.URI().Path()
			_ = rc.Close() // opened only to learn the path
			s.AddPaths([]string{path})
		}, s.win)
		return
	}
	s.spawn(func() {
		paths, err := zenity.SelectFileMultiple(
			zenity.Title("Add references"),
			zenity.Attach(os.Getpid()),
			zenity.FileFilters{
				{Name: "Pictures, videos and audio", Patterns: []string{"*.png", "*.jpg", "*.jpeg", "*.webp", "*.gif", "*.bmp", "*.tif", "*.tiff",
					"*.mp4", "*.mov", "*.m4v", "*.mkv", "*.webm", "*.wav", "*.mp3", "*.m4a", "*.aac", "*.flac", "*.ogg"}, CaseFold: true},
			})
		if errors.Is(err, zenity.ErrCanceled) || len(paths) == 0 {
			return
		}
		s.cfg.Exec.Do(func() {
			if err != nil {
				s.notice.SetText("The file dialog failed: " + err.Error())
				return
			}
			s.AddPaths(paths)
		})
	})
}
