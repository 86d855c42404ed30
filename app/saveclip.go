package app

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// SaveError is a Save As that did not happen. Path is where the user
// asked the clip to go; dst is left as it was.
type SaveError struct {
	Path string
	Err  error
}

func (e *SaveError) Error() string { return "app: save clip as " + e.Path + ": " + e.Err.Error() }
func (e *SaveError) Unwrap() error { return e.Err }

// errOverSource is a Save As that names the clip itself: copying a file
// onto itself through a temporary file would work, but a user who did it
// meant another place, and replacing the clip while it plays is a loss.
var errOverSource = errors.New("the destination is the clip itself")

// ClipSavePath is a Save As destination as the user typed it, with .mp4
// added when it has no extension (the clip is an MP4 whatever it is
// called, and Finder shows a bare name as an unknown document).
func ClipSavePath(p string) string {
	if filepath.Ext(p) == "" {
		return p + ".mp4"
	}
	return p
}

// SaveClipAs copies the clip at src to dst through a temporary file in
// dst's folder, renamed over dst only once it is complete and synced: dst
// is either what it was or the whole clip, never part of it. A dst that
// is src (by name or as the same file through a link) is refused.
func SaveClipAs(src, dst string) error {
	if same, err := sameFile(src, dst); err != nil || same {
		if err == nil {
			err = errOverSource
		}
		return &SaveError{dst, err}
	}
	in, err := os.Open(src)
	if err != nil {
		return &FileError{src, err}
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".partial-*")
	if err != nil {
		return &SaveError{dst, err}
	}
	_, cerr := io.Copy(tmp, in)
	serr := tmp.Sync()
	if err := errors.Join(cerr, serr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return &SaveError{dst, err}
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		os.Remove(tmp.Name())
		return &SaveError{dst, err}
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		os.Remove(tmp.Name())
		return &SaveError{dst, err}
	}
	return nil
}

// sameFile reports whether dst names src: the same cleaned absolute
// path, or an existing file that is src under another name.
func sameFile(src, dst string) (bool, error) {
	a, err := filepath.Abs(src)
	if err != nil {
		return false, err
	}
	b, err := filepath.Abs(dst)
	if err != nil {
		return false, err
	}
	if a == b {
		return true, nil
	}
	si, err := os.Stat(src)
	if err != nil {
		return false, &FileError{src, err}
	}
	di, err := os.Stat(dst)
	if err != nil {
		return false, nil // nothing there yet
	}
	return os.SameFile(si, di), nil
}
