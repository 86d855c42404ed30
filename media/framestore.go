package media

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math"
	"strconv"
	"sync"
	"time"
)

// FrameStore holds a clip's frames for the timeline, each kept as a JPEG
// in memory: 362 frames at 768x1344 take tens of MB instead of the 1.1 GB
// they would take as RGB, and any one decodes in a few milliseconds.
// It is safe for concurrent use.
type FrameStore struct {
	mu     sync.RWMutex
	w, h   int
	fps    float64
	frames [][]byte
	bytes  int64
}

// storeQuality is the JPEG quality of frames appended from Go.
const storeQuality = 92

// mjpegQScale is FFmpeg's MJPEG quantiser for loaded clips (2 is its best
// practical setting; the frames were already H.264-compressed once).
const mjpegQScale = "2"

// NewFrameStore makes an empty store for w x h frames at fps.
func NewFrameStore(w, h int, fps float64) *FrameStore {
	return &FrameStore{w: w, h: h, fps: fps}
}

// Append compresses one frame into the store.
func (s *FrameStore) Append(f Frame) error {
	if f.Width != s.w || f.Height != s.h || len(f.Pix) != frameBytes(f.Width, f.Height) {
		return fmt.Errorf("media: frame store: frame is %dx%d, store holds %dx%d", f.Width, f.Height, s.w, s.h)
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, f.Image(), &jpeg.Options{Quality: storeQuality}); err != nil {
		return fmt.Errorf("media: frame store: %w", err)
	}
	s.add(buf.Bytes())
	return nil
}

func (s *FrameStore) add(jpg []byte) {
	s.mu.Lock()
	s.frames = append(s.frames, jpg)
	s.bytes += int64(len(jpg))
	s.mu.Unlock()
}

// Len is the number of frames.
func (s *FrameStore) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.frames)
}

// Size is the frame size.
func (s *FrameStore) Size() (w, h int) { return s.w, s.h }

// FPS is the frame rate the store indexes time with.
func (s *FrameStore) FPS() float64 { return s.fps }

// Bytes is the compressed size of all frames.
func (s *FrameStore) Bytes() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bytes
}

// Frame decodes frame i.
func (s *FrameStore) Frame(i int) (image.Image, error) {
	s.mu.RLock()
	n := len(s.frames)
	var jpg []byte
	if i >= 0 && i < n {
		jpg = s.frames[i]
	}
	s.mu.RUnlock()
	if jpg == nil {
		return nil, fmt.Errorf("media: frame store: frame %d outside 0..%d", i, n-1)
	}
	img, err := jpeg.Decode(bytes.NewReader(jpg))
	if err != nil {
		return nil, fmt.Errorf("media: frame store: frame %d: %w", i, err)
	}
	return img, nil
}

// IndexAt is the frame shown at time t: the last frame starting at or
// before t, clamped to the clip.
func (s *FrameStore) IndexAt(t time.Duration) int {
	// The epsilon keeps t = i/fps, computed in float, on frame i.
	i := int(math.Floor(t.Seconds()*s.fps + 1e-6))
	return min(max(i, 0), s.Len()-1)
}

// At decodes the frame shown at time t and returns its index.
func (s *FrameStore) At(t time.Duration) (image.Image, int, error) {
	i := s.IndexAt(t)
	img, err := s.Frame(i)
	return img, i, err
}

// FrameStoreOptions chooses the size frames are stored at.
type FrameStoreOptions struct {
	// Width and Height scale the frames (Stretch); zero keeps the clip's size.
	Width, Height int
	// MaxFrames bounds the number of frames loaded; zero means
	// DefaultMaxStoreFrames.
	MaxFrames int
}

// DefaultMaxStoreFrames bounds a store loaded from a file: five minutes at
// 24 fps, twenty times H3's longest clip, so a long film dropped on the
// timeline cannot fill memory.
const DefaultMaxStoreFrames = 5 * 60 * FPS

// LoadFrames fills a store from a video file with the default Tools.
func LoadFrames(ctx context.Context, path string, opt FrameStoreOptions) (*FrameStore, error) {
	return Default().LoadFrames(ctx, path, opt)
}

// LoadFrames decodes every frame of a video (normally a finished H3 clip)
// and stores it. FFmpeg does the decoding and the JPEG compression; Go only
// splits its MJPEG stream into frames, so loading runs at FFmpeg's speed.
func (t *Tools) LoadFrames(ctx context.Context, path string, opt FrameStoreOptions) (*FrameStore, error) {
	info, err := t.Probe(ctx, path)
	if err != nil {
		return nil, err
	}
	if !info.HasVideo() || info.Kind == KindImage {
		return nil, fmt.Errorf("media: load frames %s: the %s has no video stream", path, info.Kind)
	}
	w, h := info.Width, info.Height
	if opt.Width > 0 && opt.Height > 0 {
		w, h = opt.Width, opt.Height
	}
	bin, err := t.ffmpeg()
	if err != nil {
		return nil, err
	}
	args := append(commonArgs(), inputArgs(path)...)
	// The fps filter makes a variable-rate clip uniform, so IndexAt's
	// i = t x fps holds; an H3 clip is already 24 fps and passes unchanged.
	args = append(args, "-map", "0:v:0", "-an", "-sn", "-dn",
		"-vf", fmt.Sprintf("fps=%s,scale=%d:%d:flags=lanczos,setsar=1", strconv.FormatFloat(info.FPS, 'g', -1, 64), w, h))
	if opt.MaxFrames <= 0 {
		opt.MaxFrames = DefaultMaxStoreFrames
	}
	args = append(args, "-frames:v", strconv.Itoa(opt.MaxFrames))
	args = append(args, "-c:v", "mjpeg", "-q:v", mjpegQScale, "-pix_fmt", "yuvj420p", "-f", "image2pipe", "pipe:1")
	p := t.newProc(ctx, bin, t.timeout(), args...)
	p.strict = true
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("media: load frames %s: %w", path, err)
	}
	if err := p.start(); err != nil {
		return nil, fmt.Errorf("media: load frames %s: %w", path, err)
	}
	s := NewFrameStore(w, h, info.FPS)
	serr := splitJPEGs(bufio.NewReaderSize(out, 1<<20), s.add)
	if serr != nil {
		p.abort()
		return nil, fmt.Errorf("media: load frames %s: %w", path, serr)
	}
	if err := p.wait(); err != nil {
		return nil, fmt.Errorf("media: load frames %s: %w", path, err)
	}
	if s.Len() == 0 {
		return nil, fmt.Errorf("media: load frames %s: no frame could be decoded", path)
	}
	return s, nil
}

// JPEG markers the splitter needs.
const (
	markerSOI = 0xd8
	markerEOI = 0xd9
	markerSOS = 0xda
	markerRST = 0xd0 // RST0..RST7 = 0xd0..0xd7, no length
)

// maxJPEG bounds one frame of the stream.
const maxJPEG = 64 << 20

// splitJPEGs cuts a stream of concatenated JPEGs into single images by
// walking their markers: length-prefixed segments, then entropy-coded
// data after SOS, where 0xFF is always followed by 0x00 or an RST marker
// unless a real marker begins. A clean end of stream ends the walk.
func splitJPEGs(r *bufio.Reader, emit func([]byte)) error {
	for {
		var img []byte
		b0, err := r.ReadByte()
		if err == io.EOF {
			return nil
		}
		b1, err2 := r.ReadByte()
		if err != nil || err2 != nil || b0 != 0xff || b1 != markerSOI {
			return errors.New("stream is not a sequence of JPEG frames")
		}
		img = append(img, b0, b1)
		img, err = readJPEGBody(r, img)
		if err != nil {
			return err
		}
		emit(img)
	}
}

func readJPEGBody(r *bufio.Reader, img []byte) ([]byte, error) {
	var pending byte // marker already read by the entropy scan, 0 if none
	for {
		marker := pending
		pending = 0
		if marker == 0 {
			var err error
			if marker, err = nextMarker(r); err != nil {
				return nil, err
			}
		}
		img = append(img, 0xff, marker)
		switch {
		case marker == markerEOI:
			return img, nil
		case marker >= markerRST && marker <= markerRST+7:
			continue
		}
		var l [2]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, errors.New("JPEG frame cut short")
		}
		n := int(l[0])<<8 | int(l[1])
		if n < 2 || len(img)+n > maxJPEG {
			return nil, errors.New("bad JPEG segment length")
		}
		img = append(img, l[:]...)
		start := len(img)
		img = append(img, make([]byte, n-2)...)
		if _, err := io.ReadFull(r, img[start:]); err != nil {
			return nil, errors.New("JPEG frame cut short")
		}
		if marker == markerSOS {
			var err error
			if img, pending, err = readEntropy(r, img); err != nil {
				return nil, err
			}
		}
	}
}

// nextMarker skips fill bytes and returns the next marker code.
func nextMarker(r *bufio.Reader) (byte, error) {
	b, err := r.ReadByte()
	if err != nil || b != 0xff {
		return 0, errors.New("JPEG frame cut short or corrupt")
	}
	for {
		b, err = r.ReadByte()
		if err != nil {
			return 0, errors.New("JPEG frame cut short")
		}
		if b != 0xff {
			return b, nil
		}
	}
}

// readEntropy copies scan data up to the next marker, which it consumes
// and returns.
func readEntropy(r *bufio.Reader, img []byte) ([]byte, byte, error) {
	for {
		chunk, err := r.ReadSlice(0xff)
		if err != nil {
			return nil, 0, errors.New("JPEG scan cut short")
		}
		img = append(img, chunk...)
		if len(img) > maxJPEG {
			return nil, 0, errors.New("JPEG frame too large")
		}
		c, err := r.ReadByte()
		for err == nil && c == 0xff { // fill bytes before a marker
			c, err = r.ReadByte()
		}
		if err != nil {
			return nil, 0, errors.New("JPEG scan cut short")
		}
		if c == 0x00 || (c >= markerRST && c <= markerRST+7) {
			img = append(img, c) // stuffed byte or restart marker: still scan data
			continue
		}
		return img[:len(img)-1], c, nil
	}
}
