package media

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"
)

// DefaultTimeout bounds one FFmpeg or FFprobe child when Tools.Timeout is
// zero. Long enough to encode a 15 s clip at 1344x768 on a slow Mac, short
// enough that a hung child cannot hold a job forever.
const DefaultTimeout = 10 * time.Minute

// probeTimeout bounds FFprobe runs and other children that only read headers.
const probeTimeout = 30 * time.Second

// Tools names the FFmpeg binaries and the limits media runs them under.
// The zero value looks both up on PATH and uses DefaultTimeout.
type Tools struct {
	// FFmpeg and FFprobe are explicit binary paths; empty means PATH lookup.
	FFmpeg, FFprobe string
	// Timeout bounds each long-running child (decode, encode); zero means
	// DefaultTimeout. Header-only children use a shorter fixed limit.
	Timeout time.Duration
	// Logger receives debug lines for each child; nil means slog.Default().
	Logger *slog.Logger
}

// ErrNoFFmpeg reports that a required FFmpeg binary could not be found.
var ErrNoFFmpeg = errors.New("media: ffmpeg not found")

var defaultTools atomic.Pointer[Tools]

// SetDefault installs the Tools used by the package-level functions
// (Probe, DecodeAudio, ...). The app calls it once at startup with the
// binaries from its settings.
func SetDefault(t Tools) { defaultTools.Store(&t) }

// Default returns the Tools installed with SetDefault, or the zero Tools.
func Default() *Tools {
	if t := defaultTools.Load(); t != nil {
		return t
	}
	return &Tools{}
}

func (t *Tools) timeout() time.Duration {
	if t.Timeout > 0 {
		return t.Timeout
	}
	return DefaultTimeout
}

func (t *Tools) logger() *slog.Logger {
	if t.Logger != nil {
		return t.Logger
	}
	return slog.Default()
}

// ffmpeg returns the path of the ffmpeg binary.
func (t *Tools) ffmpeg() (string, error) { return resolve("ffmpeg", t.FFmpeg) }

// ffprobe returns the path of the ffprobe binary.
func (t *Tools) ffprobe() (string, error) { return resolve("ffprobe", t.FFprobe) }

func resolve(name, explicit string) (string, error) {
	if explicit != "" {
		st, err := os.Stat(explicit)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%w: %s is not an executable %s binary; install FFmpeg or fix the configured path", ErrNoFFmpeg, explicit, name)
		}
		return explicit, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%w: no %s on PATH; install FFmpeg (macOS: brew install ffmpeg) or configure its path", ErrNoFFmpeg, name)
	}
	return p, nil
}

// Capabilities is what Discover found about the FFmpeg installation.
type Capabilities struct {
	FFmpeg, FFprobe               string // resolved binary paths
	FFmpegVersion, FFprobeVersion string // e.g. "5.1.9-0+deb12u1"
	// H264Encoder is the encoder EncodeMP4 will use: "libx264",
	// "h264_videotoolbox" or "" when neither exists.
	H264Encoder string
	// AAC reports whether FFmpeg's native "aac" encoder exists.
	AAC bool
}

// Usable reports whether H3 Studio can write its MP4s with this FFmpeg.
func (c Capabilities) Usable() error {
	var errs []error
	if c.H264Encoder == "" {
		errs = append(errs, fmt.Errorf("media: %s has neither libx264 nor h264_videotoolbox; install an FFmpeg built with libx264", c.FFmpeg))
	}
	if !c.AAC {
		errs = append(errs, fmt.Errorf("media: %s has no aac encoder; install a complete FFmpeg build", c.FFmpeg))
	}
	return errors.Join(errs...)
}

// Discover finds both binaries, reads their versions and lists the
// encoders H3 Studio needs. It fails only when a binary is missing or does
// not run; missing encoders are reported through Capabilities.Usable.
func (t *Tools) Discover(ctx context.Context) (Capabilities, error) {
	var c Capabilities
	var err error
	if c.FFmpeg, err = t.ffmpeg(); err != nil {
		return c, err
	}
	if c.FFprobe, err = t.ffprobe(); err != nil {
		return c, err
	}
	if c.FFmpegVersion, err = t.version(ctx, c.FFmpeg); err != nil {
		return c, err
	}
	if c.FFprobeVersion, err = t.version(ctx, c.FFprobe); err != nil {
		return c, err
	}
	out, err := t.output(ctx, c.FFmpeg, probeTimeout, "-hide_banner", "-encoders")
	if err != nil {
		return c, fmt.Errorf("media: list encoders: %w", err)
	}
	enc := parseEncoders(out)
	for _, name := range []string{"libx264", "h264_videotoolbox"} {
		if enc[name] {
			c.H264Encoder = name
			break
		}
	}
	c.AAC = enc["aac"]
	return c, nil
}

// version returns the third word of the first `-version` line
// ("ffmpeg version 5.1.9-0+deb12u1 Copyright ...").
func (t *Tools) version(ctx context.Context, bin string) (string, error) {
	out, err := t.output(ctx, bin, probeTimeout, "-version")
	if err != nil {
		return "", fmt.Errorf("media: %s does not run: %w", bin, err)
	}
	line, _, _ := bytes.Cut(out, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 3 || f[1] != "version" {
		return "", fmt.Errorf("media: %s -version printed %q; is it really FFmpeg?", bin, oneLine(string(line)))
	}
	return f[2], nil
}

// parseEncoders reads `ffmpeg -encoders`: after the "------" separator each
// line is " FLAGS name description".
func parseEncoders(out []byte) map[string]bool {
	enc := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	started := false
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if !started {
			started = len(f) == 1 && strings.HasPrefix(f[0], "---")
			continue
		}
		if len(f) >= 2 {
			enc[f[1]] = true
		}
	}
	return enc
}

// ensure resolves both binaries, so that a missing one is reported before
// any work starts.
func (t *Tools) ensure() (ffmpeg, ffprobe string, err error) {
	if ffmpeg, err = t.ffmpeg(); err != nil {
		return "", "", err
	}
	if ffprobe, err = t.ffprobe(); err != nil {
		return "", "", err
	}
	return ffmpeg, ffprobe, nil
}
