package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"time"
)

// H3's audio format: the audio VAE works on 32 kHz, and clips carry a
// stereo soundtrack.
const (
	SampleRate = 32000
	Channels   = 2
)

// DefaultMaxAudio bounds DecodeAudio when AudioOptions.MaxDuration is zero:
// far beyond any H3 clip (15 s), small enough to stay in memory (77 MB).
const DefaultMaxAudio = 5 * time.Minute

// PCM is interleaved float32 audio in [-1, 1].
type PCM struct {
	Rate, Channels int
	Samples        []float32 // frame-major: L0 R0 L1 R1 ...
}

// Frames is the number of sample frames (samples per channel).
func (p PCM) Frames() int {
	if p.Channels == 0 {
		return 0
	}
	return len(p.Samples) / p.Channels
}

// Duration is the length of the audio.
func (p PCM) Duration() time.Duration {
	if p.Rate == 0 {
		return 0
	}
	return time.Duration(float64(p.Frames()) / float64(p.Rate) * float64(time.Second))
}

func (p PCM) validate() error {
	if p.Rate <= 0 || p.Channels <= 0 || len(p.Samples)%p.Channels != 0 {
		return fmt.Errorf("media: invalid PCM: %d Hz, %d channels, %d samples", p.Rate, p.Channels, len(p.Samples))
	}
	return nil
}

// AudioOptions bounds an audio decode.
type AudioOptions struct {
	Start time.Duration
	// MaxDuration caps the decoded length; zero means DefaultMaxAudio.
	MaxDuration time.Duration
}

// DecodeAudio decodes with the default Tools.
func DecodeAudio(ctx context.Context, path string, opt AudioOptions) (PCM, error) {
	return Default().DecodeAudio(ctx, path, opt)
}

// DecodeAudio decodes the first audio stream of any FFmpeg-readable file
// (an audio file or the soundtrack of a video) to 32 kHz stereo float32.
// A mono source is copied to both channels at full level (FFmpeg's default
// upmix would lower it by 3 dB); more channels are downmixed by FFmpeg.
func (t *Tools) DecodeAudio(ctx context.Context, path string, opt AudioOptions) (PCM, error) {
	if opt.MaxDuration < 0 || opt.Start < 0 {
		return PCM{}, fmt.Errorf("media: decode audio %s: invalid options %+v", path, opt)
	}
	if opt.MaxDuration == 0 {
		opt.MaxDuration = DefaultMaxAudio
	}
	info, err := t.Probe(ctx, path)
	if err != nil {
		return PCM{}, err
	}
	if !info.HasAudio() {
		return PCM{}, fmt.Errorf("media: decode audio %s: the %s has no audio stream", path, info.Kind)
	}
	if opt.Start.Seconds() >= info.DurationS {
		return PCM{}, fmt.Errorf("media: decode audio %s: start %s is past the end of the %.2f s audio", path, opt.Start, info.DurationS)
	}
	bin, err := t.ffmpeg()
	if err != nil {
		return PCM{}, err
	}
	var pre []string
	if opt.Start > 0 {
		pre = []string{"-ss", seconds(opt.Start)}
	}
	args := append(commonArgs(), inputArgs(path, pre...)...)
	args = append(args, "-map", "0:a:0", "-vn", "-sn", "-dn", "-t", seconds(opt.MaxDuration))
	if info.AudioChannels == 1 {
		args = append(args, "-af", "pan=stereo|c0=c0|c1=c0")
	}
	args = append(args, "-ac", "2", "-ar", "32000", "-c:a", "pcm_f32le", "-f", "f32le", "pipe:1")
	p := t.newProc(ctx, bin, t.timeout(), args...)
	p.strict = true
	// The -t cap bounds the output; the slack absorbs resampler rounding.
	limit := int64(opt.MaxDuration.Seconds()*SampleRate+SampleRate) * Channels * 4
	var out bytes.Buffer
	p.cmd.Stdout = &limitedWriter{w: &out, n: limit}
	if err := p.start(); err != nil {
		return PCM{}, fmt.Errorf("media: decode audio %s: %w", path, err)
	}
	if err := p.wait(); err != nil {
		return PCM{}, fmt.Errorf("media: decode audio %s: %w", path, err)
	}
	pcm := PCM{Rate: SampleRate, Channels: Channels, Samples: float32sLE(out.Bytes())}
	if pcm.Frames() == 0 {
		return PCM{}, fmt.Errorf("media: decode audio %s: no audio could be decoded", path)
	}
	pcm.Samples = pcm.Samples[:pcm.Frames()*Channels]
	return pcm, nil
}

func float32sLE(b []byte) []float32 {
	s := make([]float32, len(b)/4)
	for i := range s {
		s[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return s
}

// limitedWriter fails once more than n bytes arrive, which stops a child
// that ignores its duration cap.
type limitedWriter struct {
	w io.Writer
	n int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, fmt.Errorf("media: output exceeds its %d-byte bound", l.n)
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
