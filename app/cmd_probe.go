package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sync"

	"h3studio/media"
)

func init() {
	register(Command{
		Name:    "probe",
		Summary: "describe media files as H3 Studio sees them (kind, size, fps, audio)",
		Run:     runProbe,
	})
}

var (
	mediaOnce  sync.Once
	mediaTools media.Tools
)

// SetMediaTools names explicit FFmpeg and FFprobe binaries (empty: look them
// up on PATH). main reads them from H3_FFMPEG and H3_FFPROBE, the one place
// the environment is read, and calls this before any command or window.
func SetMediaTools(ffmpeg, ffprobe string) {
	mediaTools = media.Tools{FFmpeg: ffmpeg, FFprobe: ffprobe}
}

// configureMedia installs the tools SetMediaTools named as media's
// defaults, once.
func configureMedia() {
	mediaOnce.Do(func() {
		media.SetDefault(mediaTools)
	})
}

func runProbe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("probe", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per file")
	tools := fs.Bool("tools", false, "also describe the FFmpeg installation (versions, H.264 and AAC encoders)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: h3studio probe [--tools] FILE... [--json]")
		fs.PrintDefaults()
	}
	files, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 && !*tools {
		return &UsageError{Msg: "name at least one file: h3studio probe FILE... [--json]"}
	}
	configureMedia()
	enc := json.NewEncoder(stdout)
	if *tools {
		if err := printTools(ctx, stdout, enc, *asJSON); err != nil {
			return err
		}
	}
	for _, path := range files {
		info, err := media.Probe(ctx, path)
		if err != nil {
			return err
		}
		if *asJSON {
			if err := enc.Encode(info); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintln(stdout, probeLine(info))
	}
	return nil
}

// parseInterspersed lets flags follow the file names (`probe a.mp4 --json`),
// which the standard flag package stops at.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return files, nil
		}
		files = append(files, rest[0])
		args = rest[1:]
	}
}

func probeLine(i media.Info) string {
	s := fmt.Sprintf("%s: %s %dx%d", i.Path, i.Kind, i.Width, i.Height)
	if i.Rotation != 0 {
		s += fmt.Sprintf(" rotated %d", i.Rotation)
	}
	if i.Kind != media.KindImage {
		s += fmt.Sprintf(" %.3fs", i.DurationS)
	}
	if i.HasVideo() && i.Kind != media.KindImage {
		s += fmt.Sprintf(" %.3g fps %d frames", i.FPS, i.Frames)
	}
	if i.HasAudio() {
		s += fmt.Sprintf(" audio %d ch %d Hz", i.AudioChannels, i.AudioRate)
	}
	if i.Kind == media.KindAudio {
		s = fmt.Sprintf("%s: audio %.3fs %d ch %d Hz", i.Path, i.DurationS, i.AudioChannels, i.AudioRate)
	}
	return s
}

// toolsReport is `probe --tools --json`'s description of FFmpeg.
type toolsReport struct {
	FFmpeg         string `json:"ffmpeg"`
	FFprobe        string `json:"ffprobe"`
	FFmpegVersion  string `json:"ffmpeg_version"`
	FFprobeVersion string `json:"ffprobe_version"`
	H264Encoder    string `json:"h264_encoder"`
	AAC            bool   `json:"aac"`
	Problem        string `json:"problem,omitempty"`
}

func printTools(ctx context.Context, stdout io.Writer, enc *json.Encoder, asJSON bool) error {
	c, err := media.Default().Discover(ctx)
	if err != nil {
		return err
	}
	r := toolsReport{c.FFmpeg, c.FFprobe, c.FFmpegVersion, c.FFprobeVersion, c.H264Encoder, c.AAC, ""}
	if err := c.Usable(); err != nil {
		r.Problem = oneLine(err.Error())
	}
	if asJSON {
		return enc.Encode(r)
	}
	fmt.Fprintf(stdout, "ffmpeg %s (%s), ffprobe %s (%s), H.264 encoder %q, AAC %v\n",
		r.FFmpegVersion, r.FFmpeg, r.FFprobeVersion, r.FFprobe, r.H264Encoder, r.AAC)
	if r.Problem != "" {
		fmt.Fprintln(stdout, "problem:", r.Problem)
	}
	return nil
}
