package media

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"h3studio/resample"
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

// soundtrackRate is the rate the official pipeline extracts a video's
// soundtrack at before its single resample to 32 kHz.
const soundtrackRate = 44100

// DecodeAudio decodes the first audio stream of any FFmpeg-readable file
// (an audio file or the soundtrack of a video) to 32 kHz stereo float32 the
// way the official pipeline does (SGLang's reference_encoding._load_waveform):
// FFmpeg makes stereo (its own -ac 2 mix) at the source's rate for an audio
// file and at 44.1 kHz for a video's soundtrack, then one band-limited sinc
// resample to 32 kHz as torchaudio.transforms.Resample (package resample).
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
	rate := info.AudioRate
	args := append(commonArgs(), inputArgs(path, pre...)...)
	args = append(args, "-map", "0:a:0", "-vn", "-sn", "-dn", "-ac", "2")
	if info.Kind != KindAudio {
		rate = soundtrackRate
		args = append(args, "-ar", strconv.Itoa(rate))
	}
	// %.9g as the official extraction formats it: FFmpeg cuts at the
	// nearest sample, so the digits decide the count.
	args = append(args, "-t", strconv.FormatFloat(opt.MaxDuration.Seconds(), 'g', 9, 64), "-c:a", "pcm_f32le", "-f", "f32le", "pipe:1")
	p := t.newProc(ctx, bin, t.timeout(), args...)
	p.strict = true
	limit := int64(opt.MaxDuration.Seconds()*float64(rate)+float64(rate)) * Channels * 4
	var out bytes.Buffer
	p.cmd.Stdout = &limitedWriter{w: &out, n: limit}
	if err := p.start(); err != nil {
		return PCM{}, fmt.Errorf("media: decode audio %s: %w", path, err)
	}
	if err := p.wait(); err != nil {
		return PCM{}, fmt.Errorf("media: decode audio %s: %w", path, err)
	}
	pcm := PCM{Rate: rate, Channels: Channels, Samples: float32sLE(out.Bytes())}
	if pcm.Frames() == 0 {
		return PCM{}, mark(ErrDamaged, fmt.Errorf("media: decode audio %s: no audio could be decoded", path))
	}
	pcm.Samples = pcm.Samples[:pcm.Frames()*Channels]
	return to32k(pcm)
}

// to32k resamples interleaved stereo to SampleRate (torchaudio's sinc
// resample; nothing to do at 32 kHz already).
func to32k(p PCM) (PCM, error) {
	if p.Rate == SampleRate {
		return p, nil
	}
	n := p.Frames()
	planes := [][]float32{make([]float32, n), make([]float32, n)}
	for i := 0; i < n; i++ {
		planes[0][i], planes[1][i] = p.Samples[2*i], p.Samples[2*i+1]
	}
	out, err := resample.AudioTransform(planes, p.Rate, SampleRate)
	if err != nil {
		return PCM{}, fmt.Errorf("media: resample %d Hz audio: %w", p.Rate, err)
	}
	m := len(out[0])
	q := PCM{Rate: SampleRate, Channels: Channels, Samples: make([]float32, 2*m)}
	for i := 0; i < m; i++ {
		q.Samples[2*i], q.Samples[2*i+1] = out[0][i], out[1][i]
	}
	return q, nil
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
