package app

import (
	"context"
	"image"
	"image/color"
	"time"

	"h3studio/media"
)

// ThumbSide is the square the window's thumbnails fit in: the reference
// rows show them at this size, the queue and history rows smaller.
const ThumbSide = 112

// thumbKey is a thumbnail of one file version at one size.
type thumbKey struct {
	probeKey
	side int
}

// thumbs caches thumbnails as probes caches headers: a file shown again
// (Reuse, the session restored at start, a history row redrawn after each
// job) costs a stat instead of an FFmpeg run.
var thumbs fileCache[thumbKey, image.Image]

// Thumbnail is a picture of a file for the window's rows, within side x
// side: a still scaled down, a frame near a video's start (media's poster
// frame), an audio file's waveform (side wide, five sevenths as high).
// The header comes from Probe's cache, and the picture is cached by file
// version; failures are not cached. Errors are *FileError.
func Thumbnail(ctx context.Context, path string, side int) (image.Image, error) {
	key, err := fileKey(path)
	if err != nil {
		return nil, &FileError{path, err}
	}
	if img, ok := thumbs.get(thumbKey{key, side}); ok {
		return img, nil
	}
	info, err := Probe(ctx, path)
	if err != nil {
		return nil, err
	}
	var img image.Image
	if info.Kind == media.KindAudio {
		pcm, derr := media.DecodeAudio(ctx, path, media.AudioOptions{MaxDuration: waveformSpan})
		img, err = waveform(pcm, side, side*5/7), derr
	} else {
		img, err = media.ThumbnailOf(ctx, path, info, side)
	}
	if err != nil {
		return nil, &FileError{path, err}
	}
	thumbs.put(thumbKey{key, side}, img)
	return img, nil
}

// waveformSpan is how much of an audio file its thumbnail draws: the
// model takes at most 15 s of audio in all.
const waveformSpan = 30 * time.Second

// CachedThumbnail is the thumbnail Thumbnail made of the file as it is
// now, found with one stat; false when it would need making.
func CachedThumbnail(path string, side int) (image.Image, bool) {
	key, err := fileKey(path)
	if err != nil {
		return nil, false
	}
	return thumbs.get(thumbKey{key, side})
}

// ReadyReference is AddableReference with the file's thumbnail, answered
// only from the caches an earlier add filled (a few stats, no FFprobe,
// decode or FFmpeg run), so the window can fill its lists at once when
// it reuses a request. False when any part would need reading the file,
// or the file is no longer addable (the full read then says why).
func ReadyReference(ctx context.Context, path, want string) (Reference, media.Info, image.Image, bool) {
	key, err := fileKey(path)
	if err != nil {
		return Reference{}, media.Info{}, nil, false
	}
	info, probed := probes.get(key)
	_, whole := verified.get(key)
	thumb, drawn := thumbs.get(thumbKey{key, ThumbSide})
	if !probed || !drawn || (info.Kind == media.KindImage && !whole) {
		return Reference{}, media.Info{}, nil, false
	}
	ref, info, err := AddableReference(ctx, path, want)
	if err != nil {
		return Reference{}, media.Info{}, nil, false
	}
	return ref, info, thumb, true
}

// waveform draws the peak envelope of pcm (both channels) as a w x h
// picture, the usual audio thumbnail.
func waveform(pcm media.PCM, w, h int) image.Image {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	n := pcm.Frames()
	if n == 0 || pcm.Channels == 0 {
		return img
	}
	ink := color.NRGBA{R: 0x3d, G: 0x8b, B: 0xfd, A: 0xff}
	for x := 0; x < w; x++ {
		a, b := x*n/w, (x+1)*n/w
		peak := float32(0)
		for i := a * pcm.Channels; i < b*pcm.Channels && i < len(pcm.Samples); i++ {
			peak = max(peak, pcm.Samples[i], -pcm.Samples[i])
		}
		half := int(min(peak, 1) * float32(h) / 2)
		for y := h/2 - half; y <= h/2+half && y < h; y++ {
			img.SetNRGBA(x, y, ink)
		}
	}
	return img
}
