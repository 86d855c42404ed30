package ui

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/ebitengine/oto/v3"

	"h3studio/media"
)

// bytesPerSample is one stereo float32 sample frame as oto reads it.
const bytesPerSample = media.Channels * 4

// playerBuffer is the oto player's staging buffer: two ALSA periods of
// 1024 samples (64 ms at 32 kHz). oto reads the source with its lock
// released and appends to this buffer afterwards, so for that instant the
// clock (bytes served minus buffered) runs ahead by up to one buffer; a
// small buffer keeps the error under two frames at 24 fps.
const playerBuffer = 2048 * bytesPerSample

// ErrNoAudioDevice wraps the reason no sound can play on this machine.
var ErrNoAudioDevice = errors.New("no audio device")

// device is the process-wide oto context: oto supports one per process,
// so it is opened on the first clip with a soundtrack and kept.
var device struct {
	once sync.Once
	ctx  *oto.Context
	err  error
}

// openDevice opens the output at 32 kHz stereo float32 (H3's own format,
// so no resampling) once. A missing device is reported by oto either from
// NewContext or only after ready, through ctx.Err.
func openDevice() (*oto.Context, error) {
	device.once.Do(func() {
		ctx, ready, err := oto.NewContext(&oto.NewContextOptions{
			SampleRate:   media.SampleRate,
			ChannelCount: media.Channels,
			Format:       oto.FormatFloat32LE,
		})
		if err == nil {
			<-ready
			err = ctx.Err()
		}
		if err != nil {
			device.err = fmt.Errorf("%w: %v", ErrNoAudioDevice, err)
			slog.Warn("no audio device; clips play without sound", "err", err)
			return
		}
		device.ctx = ctx
	})
	return device.ctx, device.err
}

// Sound is a clip's soundtrack, decoded once, ready to play in sync with
// the timeline. A clip without an audio stream gives a silent Sound.
type Sound struct {
	out    *oto.Context // nil when silent or without a device
	devErr error        // why out is nil although the clip has sound
	reader *clipReader
	player *oto.Player // made on the first play; used on the UI goroutine
}

// LoadSound decodes the soundtrack of the clip at path and opens the audio
// device on first use. A clip with no audio stream, or a machine with no
// audio device, gives a Sound that plays nothing (Silent) without error;
// the error is for a soundtrack that exists but cannot be decoded.
// It blocks on FFmpeg, so call it off the UI goroutine.
func LoadSound(ctx context.Context, path string) (*Sound, error) {
	info, err := media.Probe(ctx, path)
	if err != nil {
		return nil, err
	}
	if !info.HasAudio() {
		return &Sound{}, nil
	}
	pcm, err := media.DecodeAudio(ctx, path, media.AudioOptions{})
	if err != nil {
		return nil, err
	}
	return newSound(pcm), nil
}

// newSound readies decoded 32 kHz stereo audio for the device.
func newSound(pcm media.PCM) *Sound {
	s := &Sound{reader: &clipReader{pcm: pcmBytes(pcm)}}
	s.out, s.devErr = openDevice()
	return s
}

// pcmBytes is pcm as the device reads it (float32 little-endian).
func pcmBytes(pcm media.PCM) []byte {
	b := make([]byte, 4*len(pcm.Samples))
	for i, v := range pcm.Samples {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// Silent reports whether the sound plays nothing: no soundtrack, or no
// device to play it on.
func (s *Sound) Silent() bool { return s == nil || s.out == nil }

// DeviceErr is why a clip with a soundtrack plays silently (nil otherwise).
func (s *Sound) DeviceErr() error {
	if s == nil {
		return nil
	}
	return s.devErr
}

// start plays from frame from of an n-frame clip, looping inside
// [lo, hi] (frames) when lo < hi and from lies inside, else stopping at
// the clip's end, and returns the playhead that follows the audio clock.
// Run it on the UI goroutine.
func (s *Sound) start(from, n int, fps float64, lo, hi int) playhead {
	if s.player == nil {
		s.player = s.out.NewPlayer(s.reader)
		s.player.SetBufferSize(playerBuffer)
	}
	s.player.Pause()
	r := span{from: sampleOfFrame(from, fps), stop: sampleOfFrame(n, fps)}
	if lo < hi && from >= lo && from <= hi {
		r.lo, r.hi = sampleOfFrame(lo, fps), sampleOfFrame(hi+1, fps)
	}
	s.reader.setSpan(r)
	// Seek drops what the player buffered and rewinds the reader, whose
	// served count restarts at zero with it.
	if _, err := s.player.Seek(r.from*bytesPerSample, io.SeekStart); err != nil {
		s.devErr = err
		return nil
	}
	s.player.Play()
	return s.playhead(r, n, fps, lo, hi)
}

// stop silences the sound (pause, K, a speed other than 1x). UI goroutine.
func (s *Sound) stop() {
	if s != nil && s.player != nil {
		s.player.Pause()
	}
}

// playhead reads the frame being heard: samples served to oto minus those
// still in its buffer, mapped through the loop. The count of samples
// played never moves backwards (see playerBuffer). Should the device fail mid-play, the clock hands over
// to the wall clock from the last frame heard, so the picture keeps going.
func (s *Sound) playhead(r span, n int, fps float64, lo, hi int) playhead {
	var (
		mu       sync.Mutex // the ticker calls it; so may a test
		played   int64
		last     = r.from
		fallback playhead
	)
	return func(now time.Time) (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if fallback != nil {
			return fallback(now)
		}
		if err := errors.Join(s.out.Err(), s.player.Err()); err != nil {
			slog.Warn("audio stopped; the timeline continues without sound", "err", err)
			fallback = wallPlayhead(1, min(frameOfSample(last, fps), n-1), n, fps, lo, hi, now)
			return fallback(now)
		}
		played = max(played, (s.reader.servedBytes()-int64(s.player.BufferedSize()))/bytesPerSample)
		last = r.position(played)
		return min(frameOfSample(last, fps), n-1), !r.looping() && last >= r.stop
	}
}

// span is one play of the soundtrack in samples: from the start sample to
// stop (the clip's end), or wrapping from hi back to lo when hi > lo.
type span struct {
	from, stop, lo, hi int64
}

// looping reports whether the play wraps inside [lo, hi).
func (r span) looping() bool { return r.hi > r.lo && r.from >= r.lo && r.from < r.hi }

// position is the clip sample heard after played samples of this play.
func (r span) position(played int64) int64 {
	at := r.from + played
	if r.looping() && at >= r.hi {
		return r.lo + (at-r.hi)%(r.hi-r.lo)
	}
	return min(at, r.stop)
}

// fpsRatio writes a frame rate as num/den frames per second: whole rates
// exactly, NTSC-style rates (23.976, 29.97) over 1001. A store without a
// rate is taken at media.FPS, as the time code does.
func fpsRatio(fps float64) (num, den int64) {
	if fps <= 0 || math.IsNaN(fps) || math.IsInf(fps, 0) {
		return media.FPS, 1
	}
	if r := math.Round(fps); math.Abs(fps-r) < 1e-6 {
		return int64(r), 1
	}
	return int64(math.Round(fps * 1001)), 1001
}

// sampleOfFrame is the first sample at or after frame i starts. With
// frameOfSample it is exact integer math, so frameOfSample(sampleOfFrame(i))
// is i for every frame (at 24 fps a frame is 1333 1/3 samples).
func sampleOfFrame(i int, fps float64) int64 {
	num, den := fpsRatio(fps)
	q := int64(i) * media.SampleRate * den
	return (q + num - 1) / num
}

// frameOfSample is the frame showing while sample s plays.
func frameOfSample(s int64, fps float64) int {
	num, den := fpsRatio(fps)
	return int(s * num / (media.SampleRate * den))
}

// clipReader is the soundtrack as oto reads it: float32 stereo bytes over
// the clip's whole length (silence past the decoded audio, which may end
// early), played along a span. oto calls Read and Seek from its own
// goroutine while the playhead reads served from the ticker's.
type clipReader struct {
	pcm []byte

	mu     sync.Mutex
	span   span  // in samples
	pos    int64 // next byte
	served int64 // bytes read since the last Seek
}

func (c *clipReader) setSpan(r span) {
	c.mu.Lock()
	c.span = r
	c.mu.Unlock()
}

func (c *clipReader) servedBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.served
}

// Read fills p with whole samples, wrapping at the loop's end and ending
// at the clip's.
func (c *clipReader) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p = p[:len(p)/bytesPerSample*bytesPerSample]
	loop := c.span.looping()
	end := c.span.stop * bytesPerSample
	if loop {
		end = c.span.hi * bytesPerSample
	}
	n := 0
	for n < len(p) {
		if c.pos >= end {
			if !loop {
				break
			}
			c.pos = c.span.lo * bytesPerSample
		}
		k := int(min(int64(len(p)-n), end-c.pos))
		have := 0
		if c.pos < int64(len(c.pcm)) {
			have = copy(p[n:n+k], c.pcm[c.pos:])
		}
		clear(p[n+have : n+k])
		n += k
		c.pos += int64(k)
	}
	c.served += int64(n)
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Seek moves to a byte offset from the start (the only whence oto uses).
func (c *clipReader) Seek(off int64, whence int) (int64, error) {
	if whence != io.SeekStart || off < 0 || off%bytesPerSample != 0 {
		return 0, fmt.Errorf("ui: audio seek to %d (whence %d): want a whole sample from the start", off, whence)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pos, c.served = off, 0
	return off, nil
}
