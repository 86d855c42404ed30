package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"h3studio/media"
)

// FileError is an input file a request cannot use. Path is the file as the
// request names it (as typed at the terminal, as dropped in the window);
// Err is media's or the file system's error, which says why.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// fileAdvice is the sentence for a file the request cannot use. name is
// the file as the reader knows it; every sentence starts with a word, so
// capitalising it never renames a file.
func fileAdvice(e *FileError, name string) string {
	switch {
	case errors.Is(e.Err, fs.ErrNotExist):
		return "cannot find " + name + "; check the name, or whether it was moved or deleted"
	case errors.Is(e.Err, fs.ErrPermission):
		return "cannot open " + name + ": permission denied; check the file's permissions"
	case errors.Is(e.Err, media.ErrEmpty):
		return "the file " + name + " is empty; export it again or choose another file"
	case errors.Is(e.Err, media.ErrDamaged):
		return "the file " + name + " is damaged or cut short; export it again or choose another file"
	case errors.Is(e.Err, media.ErrUnsupportedStill):
		return "the picture " + name + " is in a format H3 Studio cannot read; convert it to " + stillFormats
	case errors.Is(e.Err, media.ErrTooLarge):
		return fmt.Sprintf("the picture %s is over %d pixels a side or %d megapixels; downscale it first",
			name, media.MaxImageSide, media.MaxImagePixels/1_000_000)
	case errors.Is(e.Err, media.ErrNotMedia):
		return "the file " + name + " is not a picture, video or sound H3 Studio can read; export it again (pictures as " + stillFormats + ")"
	case errors.Is(e.Err, media.ErrNoFFmpeg):
		return noFFmpegText
	}
	return "cannot read " + name + "; choose another file"
}

// stillFormats are the picture formats media decodes.
const stillFormats = "PNG, JPEG, WebP, GIF, BMP or TIFF"

// verified remembers stills that decoded whole, keyed as the probe cache
// is, so the window's re-plan on every edit decodes each picture once.
var verified fileCache[probeKey, bool]

// VerifyImage decodes a still completely, which a header probe cannot:
// a picture cut short after its header probes fine and would fail only
// when the render reads it, after the weights have loaded.
func VerifyImage(ctx context.Context, path string) error {
	key, err := fileKey(path)
	if err != nil {
		return &FileError{path, err}
	}
	if _, ok := verified.get(key); ok {
		return nil
	}
	if _, err := media.DecodeImage(path); err != nil {
		return &FileError{path, err}
	}
	verified.put(key, true)
	return nil
}

// baseName is how the window names a file: people dropped it from a
// folder they know, so the folder is noise.
func baseName(path string) string { return filepath.Base(path) }
