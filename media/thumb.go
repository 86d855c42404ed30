package media

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"time"
)

// ErrNoPicture reports that a file (an audio file) has nothing to show.
var ErrNoPicture = errors.New("media: no picture to show")

// posterAt is how far into a clip its thumbnail is taken: past a fade-in,
// and never beyond the middle of a short clip.
const posterAt = time.Second

// Thumbnail returns a picture of path for the reference lists, scaled down
// to fit maxSide x maxSide: the still itself, or a frame near the start of
// a video. Audio files give ErrNoPicture.
func (t *Tools) Thumbnail(ctx context.Context, path string, maxSide int) (image.Image, error) {
	info, err := t.Probe(ctx, path)
	if err != nil {
		return nil, err
	}
	return t.ThumbnailOf(ctx, path, info, maxSide)
}

// ThumbnailOf is Thumbnail of a file whose header was already probed
// (info): a caller with a probe cache spares the FFprobe run.
func (t *Tools) ThumbnailOf(ctx context.Context, path string, info Info, maxSide int) (image.Image, error) {
	if maxSide <= 0 {
		return nil, fmt.Errorf("media: thumbnail %s: size %d must be positive", path, maxSide)
	}
	switch info.Kind {
	case KindAudio:
		return nil, fmt.Errorf("%w: %s is audio", ErrNoPicture, path)
	case KindImage:
		img, err := DecodeImage(path)
		if err != nil {
			return nil, err
		}
		return Resize(img, maxSide, maxSide, Fit)
	}
	at := time.Duration(math.Min(posterAt.Seconds(), info.DurationS/2) * float64(time.Second))
	var poster *image.NRGBA
	_, err := t.DecodeVideo(ctx, path, VideoOptions{Width: maxSide, Height: maxSide, Policy: Fit, Start: at, MaxFrames: 1},
		func(_ int, f Frame) error {
			poster = f.Image()
			return nil
		})
	if err != nil {
		return nil, err
	}
	return poster, nil
}

// Thumbnail makes a thumbnail with the default Tools.
func Thumbnail(ctx context.Context, path string, maxSide int) (image.Image, error) {
	return Default().Thumbnail(ctx, path, maxSide)
}

// ThumbnailOf makes a thumbnail of a probed file with the default Tools.
func ThumbnailOf(ctx context.Context, path string, info Info, maxSide int) (image.Image, error) {
	return Default().ThumbnailOf(ctx, path, info, maxSide)
}
