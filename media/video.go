package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Frame rates the engine asks for.
const (
	// FPS is H3's video rate: references are resampled to it and outputs
	// are encoded at it.
	FPS = 24
	// VisionFPS is the rate at which the vision tower samples a video
	// reference.
	VisionFPS = 2
)

// VideoOptions says how a video reference is decoded.
type VideoOptions struct {
	// Width and Height are the canvas; Policy brings each frame to it.
	// With Fit the frames can be smaller: see VideoReader.Size.
	Width, Height int
	Policy        Policy
	// FPS is the constant output rate; zero means FPS (24). Frames are
	// dropped or repeated by timestamp, as FFmpeg's fps filter does.
	FPS float64
	// Start skips this much of the clip first.
	Start time.Duration
	// MaxFrames bounds the number of frames delivered; zero means no bound.
	MaxFrames int
}

// VideoReader streams a video reference one RGB frame at a time: only the
// frame being read is in memory, whatever the clip's length.
type VideoReader struct {
	info   Info
	w, h   int
	p      *proc
	out    io.ReadCloser
	frames int
	err    error // sticky: set once the stream has ended
}

// OpenVideo starts decoding path with the default Tools.
func OpenVideo(ctx context.Context, path string, opt VideoOptions) (*VideoReader, error) {
	return Default().OpenVideo(ctx, path, opt)
}

// OpenVideo probes path, refuses anything without a video stream, and
// starts an FFmpeg child that writes rgb24 frames at opt.FPS on the canvas.
// The caller must Close the reader.
func (t *Tools) OpenVideo(ctx context.Context, path string, opt VideoOptions) (*VideoReader, error) {
	if opt.Width <= 0 || opt.Height <= 0 || opt.FPS < 0 || opt.MaxFrames < 0 || opt.Start < 0 {
		return nil, fmt.Errorf("media: open video %s: invalid options %+v", path, opt)
	}
	if opt.FPS == 0 {
		opt.FPS = FPS
	}
	info, err := t.Probe(ctx, path)
	if err != nil {
		return nil, err
	}
	switch {
	case info.Kind == KindAudio:
		return nil, fmt.Errorf("media: open video %s: it has no video stream (it is an audio file); add it as an audio reference", path)
	case info.Kind == KindImage:
		return nil, fmt.Errorf("media: open video %s: it is a still image; add it as an image reference", path)
	case opt.Start.Seconds() >= info.DurationS:
		return nil, fmt.Errorf("media: open video %s: start %s is past the end of the %.2f s clip", path, opt.Start, info.DurationS)
	}
	bin, err := t.ffmpeg()
	if err != nil {
		return nil, err
	}
	filter, w, h := videoFilter(info, opt)
	var pre []string
	if opt.Start > 0 {
		pre = []string{"-ss", seconds(opt.Start)}
	}
	args := append(commonArgs(), inputArgs(path, pre...)...)
	args = append(args, "-map", "0:v:0", "-an", "-sn", "-dn", "-vf", filter)
	if opt.MaxFrames > 0 {
		args = append(args, "-frames:v", strconv.Itoa(opt.MaxFrames))
	}
	args = append(args, "-f", "rawvideo", "-pix_fmt", "rgb24", "pipe:1")
	p := t.newProc(ctx, bin, t.timeout(), args...)
	p.strict = true
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("media: open video %s: %w", path, err)
	}
	t.logger().Debug("media: decode video", "path", path, "filter", filter)
	if err := p.start(); err != nil {
		return nil, fmt.Errorf("media: open video %s: %w", path, err)
	}
	return &VideoReader{info: info, w: w, h: h, p: p, out: out}, nil
}

// videoFilter builds the FFmpeg filter chain: constant frame rate first
// (so dropped frames are never scaled), then the policy's crop and Lanczos
// scale, computed here so stills and video share one geometry (up to the
// sub-pixel placement of Cover's window: stills resize then crop, as the
// official pipeline does; FFmpeg crops then scales).
// FFmpeg has already applied the display rotation, so info's displayed
// size is the filter's input size.
func videoFilter(info Info, opt VideoOptions) (filter string, w, h int) {
	w, h = opt.Width, opt.Height
	scale := func(sw, sh int) string {
		return fmt.Sprintf(",scale=%d:%d:flags=lanczos+accurate_rnd", sw, sh)
	}
	filter = "fps=" + strconv.FormatFloat(opt.FPS, 'g', -1, 64)
	switch opt.Policy {
	case Cover:
		r := coverCrop(info.Width, info.Height, w, h)
		// exact: keep the centre to the pixel rather than rounding the offset
		// to the chroma grid, so stills and video crop alike.
		filter += fmt.Sprintf(",crop=%d:%d:%d:%d:exact=1", r.Dx(), r.Dy(), r.Min.X, r.Min.Y) + scale(w, h)
	case Fit:
		w, h = FitSize(info.Width, info.Height, w, h)
		filter += scale(w, h)
	default:
		filter += scale(w, h)
	}
	return filter + ",setsar=1,format=rgb24", w, h
}

func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 6, 64) }

// Info is the probe of the file being decoded.
func (r *VideoReader) Info() Info { return r.info }

// Size is the size of every frame the reader delivers.
func (r *VideoReader) Size() (w, h int) { return r.w, r.h }

// Frames is the number of frames delivered so far.
func (r *VideoReader) Frames() int { return r.frames }

// Next decodes the next frame into dst, reusing dst.Pix when it has the
// right size. It returns io.EOF after the last frame, or the child's error.
func (r *VideoReader) Next(dst *Frame) error {
	if r.err != nil {
		return r.err
	}
	n := frameBytes(r.w, r.h)
	if len(dst.Pix) != n {
		dst.Pix = make([]byte, n)
	}
	dst.Width, dst.Height = r.w, r.h
	got, err := io.ReadFull(r.out, dst.Pix)
	if err == nil {
		r.frames++
		return nil
	}
	werr := r.p.wait()
	switch {
	case werr != nil:
		r.err = fmt.Errorf("media: decode video %s: %w", r.info.Path, werr)
	case errors.Is(err, io.EOF) && r.frames == 0:
		r.err = mark(ErrDamaged, fmt.Errorf("media: decode video %s: no frame could be decoded", r.info.Path))
	case errors.Is(err, io.EOF):
		r.err = io.EOF
	default:
		r.err = mark(ErrDamaged, fmt.Errorf("media: decode video %s: frame %d cut short at %d of %d bytes", r.info.Path, r.frames, got, n))
	}
	return r.err
}

// Close stops the decoder; reading past the bound or to the end is not
// required first.
func (r *VideoReader) Close() error {
	if r.err == nil {
		r.err = errors.New("media: video reader closed")
		r.p.abort()
	}
	return nil
}

// DecodeVideo calls fn for every frame of path (at most opt.MaxFrames).
// The frame passed to fn is reused for the next one; copy what you keep.
func (t *Tools) DecodeVideo(ctx context.Context, path string, opt VideoOptions, fn func(i int, f Frame) error) (int, error) {
	r, err := t.OpenVideo(ctx, path, opt)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	var f Frame
	for {
		err := r.Next(&f)
		if errors.Is(err, io.EOF) {
			return r.frames, nil
		}
		if err != nil {
			return r.frames, err
		}
		if err := fn(r.frames-1, f); err != nil {
			return r.frames, err
		}
	}
}

// DecodeVideo decodes with the default Tools.
func DecodeVideo(ctx context.Context, path string, opt VideoOptions, fn func(i int, f Frame) error) (int, error) {
	return Default().DecodeVideo(ctx, path, opt, fn)
}
