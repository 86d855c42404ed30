package media

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// EncodeOptions describes the MP4 CreateMP4 writes.
type EncodeOptions struct {
	Width, Height int
	// FPS is the frame rate; zero means FPS (24).
	FPS float64
	// Audio is the soundtrack (normally 32 kHz stereo); empty means none.
	Audio PCM
	// CRF is libx264's quality (lower is better); zero means 18, visually
	// lossless for generated video.
	CRF int
	// Preset is libx264's speed preset; empty means "medium".
	Preset string
	// FramesDir, when set, also receives every frame as frame_00001.png...
	// It must not exist or be empty; it appears only on success.
	FramesDir string
	// Metadata is written into the container as format tags (FFmpeg's
	// -metadata), custom keys included; ReadMetadata reads them back.
	// Keys are lower-case ASCII words; values are at most MaxMetadataValue
	// bytes.
	Metadata map[string]string
}

// MaxMetadataValue bounds one metadata value: tags travel on FFmpeg's
// command line and in the moov atom, read by every player.
const MaxMetadataValue = 64 << 10

const (
	defaultCRF     = 18
	defaultPreset  = "medium"
	aacBitrate     = "192k"
	audioChunkSize = 64 << 10
)

// MP4Writer encodes frames into an MP4 (H.264 yuv420p + AAC, faststart)
// while they are produced: frames go to FFmpeg's stdin, the soundtrack
// through a second pipe on fd 3, both at once, so nothing raw is staged on
// disk. The file appears at its destination only when Close succeeds.
type MP4Writer struct {
	dst, tmp  string
	framesTmp string // temporary PNG folder, "" when not asked for
	opt       EncodeOptions
	p         *proc
	video     io.WriteCloser
	audioErr  chan error
	frames    int
	writeErr  error
	once      sync.Once
	err       error
}

// CreateMP4 starts an encode with the default Tools.
func CreateMP4(ctx context.Context, dst string, opt EncodeOptions) (*MP4Writer, error) {
	return Default().CreateMP4(ctx, dst, opt)
}

// CreateMP4 starts FFmpeg writing to a temporary file next to dst. The
// caller writes every frame, then calls Close (or Abort to give up).
// Cancelling ctx kills FFmpeg; Close then removes the temporary file.
func (t *Tools) CreateMP4(ctx context.Context, dst string, opt EncodeOptions) (*MP4Writer, error) {
	if err := checkEncodeOptions(&opt); err != nil {
		return nil, fmt.Errorf("media: write %s: %w", dst, err)
	}
	bin, caps, err := t.encoder(ctx)
	if err != nil {
		return nil, err
	}
	w := &MP4Writer{dst: dst, opt: opt}
	f, err := createTemp(dst)
	if err != nil {
		return nil, err
	}
	w.tmp = f.Name()
	if err := f.Close(); err != nil {
		w.cleanup()
		return nil, fmt.Errorf("media: write %s: %w", dst, err)
	}
	if opt.FramesDir != "" {
		if err := w.prepareFramesDir(); err != nil {
			w.cleanup()
			return nil, err
		}
	}
	if err := w.start(ctx, t, bin, caps.H264Encoder); err != nil {
		w.cleanup()
		return nil, err
	}
	return w, nil
}

func checkEncodeOptions(opt *EncodeOptions) error {
	if opt.FPS == 0 {
		opt.FPS = FPS
	}
	if opt.CRF == 0 {
		opt.CRF = defaultCRF
	}
	if opt.Preset == "" {
		opt.Preset = defaultPreset
	}
	switch {
	case opt.Width < 2 || opt.Height < 2 || opt.Width%2 != 0 || opt.Height%2 != 0:
		// yuv420p halves chroma in both axes.
		return fmt.Errorf("frame size %dx%d must be even and at least 2x2", opt.Width, opt.Height)
	case opt.FPS < 1 || opt.FPS > 240:
		return fmt.Errorf("frame rate %g is outside 1..240", opt.FPS)
	case opt.CRF < 0 || opt.CRF > 51:
		return fmt.Errorf("CRF %d is outside 0..51", opt.CRF)
	}
	for k, v := range opt.Metadata {
		if !validMetadataKey(k) {
			return fmt.Errorf("metadata key %q must be 1-64 characters of a-z, 0-9 and _", k)
		}
		if len(v) > MaxMetadataValue || strings.IndexByte(v, 0) >= 0 {
			return fmt.Errorf("metadata %s is %d bytes; the limit is %d and NUL bytes are not allowed", k, len(v), MaxMetadataValue)
		}
	}
	if len(opt.Audio.Samples) > 0 {
		return opt.Audio.validate()
	}
	return nil
}

func validMetadataKey(k string) bool {
	if k == "" || len(k) > 64 {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// metadataArgs lists -metadata options in key order, so the command line
// does not depend on map order.
func metadataArgs(md map[string]string) []string {
	if len(md) == 0 {
		return nil
	}
	keys := make([]string, 0, len(md))
	for k := range md {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var args []string
	for _, k := range keys {
		args = append(args, "-metadata", k+"="+md[k])
	}
	return args
}

func (w *MP4Writer) prepareFramesDir() error {
	dir := w.opt.FramesDir
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("media: frames folder %s is not empty; choose a new folder", dir)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("media: frames folder %s: %w", dir, err)
	}
	parent := filepath.Dir(filepath.Clean(dir))
	tmp, err := os.MkdirTemp(parent, tempPrefix+filepath.Base(dir)+"-*")
	if err != nil {
		return fmt.Errorf("media: frames folder %s: %w", dir, err)
	}
	w.framesTmp = tmp
	return nil
}

func (w *MP4Writer) start(ctx context.Context, t *Tools, bin, encoder string) error {
	o := w.opt
	rate := strconv.FormatFloat(o.FPS, 'g', -1, 64)
	args := append(commonArgs(), "-y",
		"-f", "rawvideo", "-pix_fmt", "rgb24", "-s", fmt.Sprintf("%dx%d", o.Width, o.Height),
		"-framerate", rate, "-i", "pipe:0")
	hasAudio := len(o.Audio.Samples) > 0
	if hasAudio {
		args = append(args, "-f", "f32le", "-ar", strconv.Itoa(o.Audio.Rate),
			"-ac", strconv.Itoa(o.Audio.Channels), "-i", "pipe:3", "-map", "0:v:0", "-map", "1:a:0",
			"-c:a", "aac", "-b:a", aacBitrate)
	} else {
		args = append(args, "-map", "0:v:0")
	}
	args = append(args, videoCodecArgs(encoder, o)...)
	// use_metadata_tags keeps keys outside the iTunes set (our own)
	// instead of dropping them silently.
	args = append(args, metadataArgs(o.Metadata)...)
	args = append(args, "-movflags", "+faststart+use_metadata_tags", "-f", "mp4", "file:"+w.tmp)
	if w.framesTmp != "" {
		args = append(args, "-map", "0:v:0", "-c:v", "png", "-start_number", "1",
			"-f", "image2", "file:"+filepath.Join(w.framesTmp, "frame_%05d.png"))
	}
	p := t.newProc(ctx, bin, t.timeout(), args...)
	video, err := p.cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("media: write %s: %w", w.dst, err)
	}
	var audioR, audioW *os.File
	if hasAudio {
		if audioR, audioW, err = os.Pipe(); err != nil {
			return fmt.Errorf("media: write %s: %w", w.dst, err)
		}
		p.cmd.ExtraFiles = []*os.File{audioR} // fd 3 in the child
	}
	t.logger().Debug("media: encode", "dst", w.dst, "encoder", encoder, "size", fmt.Sprintf("%dx%d", o.Width, o.Height))
	err = p.start()
	if audioR != nil {
		audioR.Close() // the child holds its own copy
	}
	if err != nil {
		if audioW != nil {
			audioW.Close()
		}
		return fmt.Errorf("media: write %s: %w", w.dst, err)
	}
	w.p, w.video = p, video
	w.audioErr = make(chan error, 1)
	if hasAudio {
		go func() { w.audioErr <- writePCM(audioW, o.Audio.Samples) }()
	} else {
		w.audioErr <- nil
	}
	return nil
}

// videoCodecArgs picks H.264 settings: libx264 by quality, or Apple's
// hardware encoder by bitrate (it has no CRF).
func videoCodecArgs(encoder string, o EncodeOptions) []string {
	args := []string{"-c:v", encoder, "-pix_fmt", "yuv420p"}
	if encoder == "libx264" {
		return append(args, "-preset", o.Preset, "-crf", strconv.Itoa(o.CRF))
	}
	// About 0.2 bits per pixel: comparable to CRF 18 on generated video.
	bitrate := int(float64(o.Width*o.Height)*o.FPS*0.2) / 1000
	return append(args, "-b:v", strconv.Itoa(bitrate)+"k")
}

// writePCM streams float32 samples little-endian into the audio pipe and
// closes it, which is FFmpeg's end of the soundtrack.
func writePCM(w *os.File, samples []float32) error {
	defer w.Close()
	bw := bufio.NewWriterSize(w, audioChunkSize)
	var b [4]byte
	for _, s := range samples {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(s))
		if _, err := bw.Write(b[:]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteFrame sends one frame of exactly Width x Height to the encoder.
func (w *MP4Writer) WriteFrame(f Frame) error {
	if w.err != nil {
		return w.err
	}
	if f.Width != w.opt.Width || f.Height != w.opt.Height || len(f.Pix) != frameBytes(f.Width, f.Height) {
		return fmt.Errorf("media: write %s: frame %d is %dx%d (%d bytes), want %dx%d", w.dst, w.frames,
			f.Width, f.Height, len(f.Pix), w.opt.Width, w.opt.Height)
	}
	if _, err := w.video.Write(f.Pix); err != nil {
		// FFmpeg has gone; its exit status says why.
		w.writeErr = err
		return w.finish(false)
	}
	w.frames++
	return nil
}

// Frames is the number of frames written so far.
func (w *MP4Writer) Frames() int { return w.frames }

// Close ends the streams, waits for FFmpeg and moves the MP4 (and the PNG
// folder) into place. On any failure nothing is left at the destination
// and the temporary files are removed.
func (w *MP4Writer) Close() error { return w.finish(false) }

// Abort kills FFmpeg and removes the temporary files.
func (w *MP4Writer) Abort() {
	_ = w.finish(true)
}

func (w *MP4Writer) finish(abort bool) error {
	w.once.Do(func() {
		if abort {
			_ = w.p.killGroup()
		}
		cerr := w.video.Close()
		aerr := <-w.audioErr
		perr := w.p.wait()
		switch {
		case abort:
			w.err = fmt.Errorf("media: write %s: aborted", w.dst)
		case perr != nil:
			w.err = fmt.Errorf("media: write %s: %w", w.dst, perr)
		case w.writeErr != nil:
			w.err = fmt.Errorf("media: write %s: ffmpeg stopped reading frames: %w", w.dst, w.writeErr)
		case w.frames == 0:
			w.err = fmt.Errorf("media: write %s: no frames were written", w.dst)
		case cerr != nil || aerr != nil:
			w.err = fmt.Errorf("media: write %s: %w", w.dst, errors.Join(cerr, aerr))
		}
		if w.err == nil {
			w.err = w.commit()
		}
		if w.err != nil {
			w.cleanup()
			return
		}
		w.err = errClosed
	})
	if w.err == errClosed {
		return nil
	}
	return w.err
}

var errClosed = errors.New("media: mp4 writer closed")

func (w *MP4Writer) commit() error {
	if err := commitTemp(w.tmp, w.dst); err != nil {
		return err
	}
	if w.framesTmp == "" {
		return nil
	}
	// An empty folder at FramesDir (checked at start) is replaced.
	_ = os.Remove(w.opt.FramesDir)
	if err := os.Rename(w.framesTmp, w.opt.FramesDir); err != nil {
		return fmt.Errorf("media: frames folder %s: %w (the MP4 was written)", w.opt.FramesDir, err)
	}
	w.framesTmp = ""
	return nil
}

func (w *MP4Writer) cleanup() {
	if w.tmp != "" {
		_ = os.Remove(w.tmp)
	}
	if w.framesTmp != "" {
		_ = os.RemoveAll(w.framesTmp)
	}
}

// EncodeMP4 writes frames and opt.Audio to dst with the default Tools.
func EncodeMP4(ctx context.Context, dst string, opt EncodeOptions, frames []Frame) error {
	return Default().EncodeMP4(ctx, dst, opt, frames)
}

// EncodeMP4 writes frames and opt.Audio to dst in one call.
func (t *Tools) EncodeMP4(ctx context.Context, dst string, opt EncodeOptions, frames []Frame) error {
	w, err := t.CreateMP4(ctx, dst, opt)
	if err != nil {
		return err
	}
	for _, f := range frames {
		if err := w.WriteFrame(f); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}

// CanEncode reports, with the default Tools, whether CreateMP4 could start.
func CanEncode(ctx context.Context) error { return Default().CanEncode(ctx) }

// CanEncode reports whether CreateMP4 could start: both binaries found,
// with an H.264 and an AAC encoder. A render checks it before it spends
// minutes on frames nothing could write.
func (t *Tools) CanEncode(ctx context.Context) error {
	_, _, err := t.encoder(ctx)
	return err
}

// encoder resolves FFmpeg and what its installation can encode.
func (t *Tools) encoder(ctx context.Context) (string, Capabilities, error) {
	bin, err := t.ffmpeg()
	if err != nil {
		return "", Capabilities{}, err
	}
	caps, err := t.capabilities(ctx)
	if err != nil {
		return "", caps, err
	}
	return bin, caps, caps.Usable()
}

// capsCache remembers Discover per binary pair: listing encoders costs a
// child process, and the installation does not change while we run.
var capsCache sync.Map // "ffmpeg\x00ffprobe" -> Capabilities

func (t *Tools) capabilities(ctx context.Context) (Capabilities, error) {
	key := t.FFmpeg + "\x00" + t.FFprobe
	if c, ok := capsCache.Load(key); ok {
		return c.(Capabilities), nil
	}
	c, err := t.Discover(ctx)
	if err != nil {
		return c, err
	}
	capsCache.Store(key, c)
	return c, nil
}
