package media

import (
	"errors"
	"fmt"
	"os"
)

// demuxers lists the container formats FFmpeg may open for a user file.
// Playlist and indirection demuxers (hls, concat, ...) are absent, so a
// crafted file cannot make FFmpeg read other files or the network; nested
// opens (an AVI's GAB2 subtitle) inherit the list. image2 is absent too,
// since it expands "%d" in a name into a sequence of other files: stills
// are decoded in Go.
const demuxers = "mov,mp4,m4a,3gp,3g2,mj2,matroska,webm,avi,mpegts,mpeg,flv,asf," +
	"gif,wav,w64,aiff,caf,mp3,flac,ogg,aac," +
	"png_pipe,jpeg_pipe,webp_pipe,bmp_pipe,tiff_pipe"

// Probe limits: enough for any camera or phone file, bounded for hostile ones.
const (
	probeSizeBytes  = "20000000"
	analyzeDuration = "20000000" // microseconds
)

// inputArgs returns the FFmpeg/FFprobe options that open path as a local
// file only. The "file:" prefix makes a path such as "-x" or "concat:a|b"
// an ordinary file name. extra goes before -i (per-input options).
func inputArgs(path string, extra ...string) []string {
	args := []string{
		"-protocol_whitelist", "file",
		"-format_whitelist", demuxers,
		"-probesize", probeSizeBytes,
		"-analyzeduration", analyzeDuration,
	}
	args = append(args, extra...)
	return append(args, "-i", "file:"+path)
}

// commonArgs starts every FFmpeg command line: no stdin, no banner, errors only.
func commonArgs() []string {
	return []string{"-nostdin", "-hide_banner", "-nostats", "-v", "error"}
}

// checkInput reports a missing, unreadable, non-regular or empty file with
// one sentence before any child is started.
func checkInput(op, path string) error {
	st, err := os.Stat(path)
	switch {
	case err != nil:
		return fmt.Errorf("media: %s %s: %w", op, path, err)
	case !st.Mode().IsRegular():
		return fmt.Errorf("media: %s %s: not a regular file", op, path)
	case st.Size() == 0:
		return mark(ErrEmpty, fmt.Errorf("media: %s %s: file is empty (0 bytes)", op, path))
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("media: %s %s: %w", op, path, err)
	}
	return f.Close()
}

// Problems with a user's file that callers act on (app words each for
// people). Errors carry them through mark, keeping their own text for logs.
var (
	ErrEmpty            = errors.New("media: the file is empty")
	ErrDamaged          = errors.New("media: the file is damaged or cut short")
	ErrNotMedia         = errors.New("media: not a picture, video or sound file media can read")
	ErrUnsupportedStill = errors.New("media: a still format media does not decode")
	ErrTooLarge         = errors.New("media: the picture is over the size limit")
)

// problem is err marked with one of the problems above; its text stays
// err's, so logs read as before.
type problem struct{ kind, err error }

func (p problem) Error() string        { return p.err.Error() }
func (p problem) Unwrap() error        { return p.err }
func (p problem) Is(target error) bool { return target == p.kind }

func mark(kind, err error) error { return problem{kind, err} }
