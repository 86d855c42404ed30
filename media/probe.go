package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kinds of reference a file can be.
const (
	KindImage      = "image"
	KindVideo      = "video"
	KindVideoAudio = "video+audio"
	KindAudio      = "audio"
)

// maxVideoSide bounds the coded size of a video FFprobe reports; larger is
// treated as a corrupt or hostile header.
const maxVideoSide = 16384

// Info is what media sees in one file. Width and Height are the displayed
// size, after Rotation has been applied.
type Info struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"` // KindImage, KindVideo, KindVideoAudio or KindAudio
	Width  int    `json:"width"`
	Height int    `json:"height"`
	// Rotation is the clockwise turn in degrees (0, 90, 180, 270) applied
	// to the stored picture for display: EXIF orientation for JPEG, the
	// display matrix for video. Decoders apply it.
	Rotation  int     `json:"rotation"`
	DurationS float64 `json:"duration_s"`
	FPS       float64 `json:"fps"`
	Frames    int     `json:"frames"` // 1 for images; container count or duration x fps for video
	// AudioChannels and AudioRate describe the first audio stream; 0 when none.
	AudioChannels int `json:"audio_channels"`
	AudioRate     int `json:"audio_rate"`
}

// HasVideo reports whether the file has pictures (a still or a video stream).
func (i Info) HasVideo() bool { return i.Kind != KindAudio }

// HasAudio reports whether the file has an audio stream.
func (i Info) HasAudio() bool { return i.Kind == KindVideoAudio || i.Kind == KindAudio }

// Probe describes path with the default Tools.
func Probe(ctx context.Context, path string) (Info, error) { return Default().Probe(ctx, path) }

// Probe describes path. Stills are recognised by their bytes and read in
// Go (no FFmpeg needed); anything else goes through FFprobe restricted to
// local files and known containers.
func (t *Tools) Probe(ctx context.Context, path string) (Info, error) {
	if err := checkInput("probe", path); err != nil {
		return Info{}, err
	}
	head, err := readHead(path)
	if err != nil {
		return Info{}, fmt.Errorf("media: probe %s: %w", path, err)
	}
	if format := sniffImage(head); format != "" {
		return probeImage(path, format)
	}
	if err := refuseStillLookalike(path, head); err != nil {
		return Info{}, err
	}
	bin, err := t.ffprobe()
	if err != nil {
		return Info{}, err
	}
	args := []string{"-hide_banner", "-v", "error", "-of", "json",
		"-show_entries", "format=duration,format_name:stream=index,codec_type,codec_name,width,height," +
			"avg_frame_rate,r_frame_rate,nb_frames,duration,channels,sample_rate:" +
			"stream_side_data=rotation:stream_tags=rotate:stream_disposition=attached_pic"}
	args = append(args, inputArgs(path)...)
	out, err := t.output(ctx, bin, probeTimeout, args...)
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrTimeout) {
			return Info{}, fmt.Errorf("media: probe %s: %w", path, err)
		}
		return Info{}, mark(ErrNotMedia, fmt.Errorf("media: probe %s: not a video or audio file FFmpeg can read (%v)", path, err))
	}
	return parseProbe(path, out)
}

type ffprobeOutput struct {
	Streams []ffprobeStream `json:"streams"`
	Format  struct {
		Duration   string `json:"duration"`
		FormatName string `json:"format_name"`
	} `json:"format"`
}

type ffprobeStream struct {
	CodecType    string `json:"codec_type"`
	CodecName    string `json:"codec_name"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	AvgFrameRate string `json:"avg_frame_rate"`
	RFrameRate   string `json:"r_frame_rate"`
	NbFrames     string `json:"nb_frames"`
	Duration     string `json:"duration"`
	Channels     int    `json:"channels"`
	SampleRate   string `json:"sample_rate"`
	Disposition  struct {
		AttachedPic int `json:"attached_pic"`
	} `json:"disposition"`
	Tags struct {
		Rotate string `json:"rotate"`
	} `json:"tags"`
	SideData []struct {
		Rotation *float64 `json:"rotation"`
	} `json:"side_data_list"`
}

// parseProbe turns FFprobe's JSON into Info, choosing the first real video
// stream (cover art is not video) and the first audio stream.
func parseProbe(path string, out []byte) (Info, error) {
	var p ffprobeOutput
	if err := json.Unmarshal(out, &p); err != nil {
		return Info{}, fmt.Errorf("media: probe %s: unreadable ffprobe output: %w", path, err)
	}
	info := Info{Path: path}
	var video, audio *ffprobeStream
	for i := range p.Streams {
		s := &p.Streams[i]
		switch {
		case s.CodecType == "video" && s.Disposition.AttachedPic == 0 && video == nil:
			video = s
		case s.CodecType == "audio" && audio == nil:
			audio = s
		}
	}
	formatDur := parseFloat(p.Format.Duration)
	switch {
	case video != nil && audio != nil:
		info.Kind = KindVideoAudio
	case video != nil:
		info.Kind = KindVideo
	case audio != nil:
		info.Kind = KindAudio
	default:
		return Info{}, mark(ErrNotMedia, fmt.Errorf("media: probe %s: no video or audio stream in this %s file", path, firstName(p.Format.FormatName)))
	}
	if audio != nil {
		info.AudioChannels = audio.Channels
		info.AudioRate, _ = strconv.Atoi(audio.SampleRate)
		info.DurationS = firstPositive(parseFloat(audio.Duration), formatDur)
		if info.AudioChannels <= 0 || info.AudioRate <= 0 {
			return Info{}, fmt.Errorf("media: probe %s: audio stream has %d channels at %d Hz; the file is damaged", path, info.AudioChannels, info.AudioRate)
		}
	}
	if video != nil {
		if err := fillVideo(&info, video, formatDur); err != nil {
			return Info{}, fmt.Errorf("media: probe %s: %w", path, err)
		}
	}
	if info.DurationS <= 0 || math.IsInf(info.DurationS, 0) {
		return Info{}, fmt.Errorf("media: probe %s: duration unknown; the file is truncated or damaged", path)
	}
	return info, nil
}

func fillVideo(info *Info, s *ffprobeStream, formatDur float64) error {
	if s.Width <= 0 || s.Height <= 0 || s.Width > maxVideoSide || s.Height > maxVideoSide {
		return fmt.Errorf("video stream is %dx%d; supported up to %dx%d", s.Width, s.Height, maxVideoSide, maxVideoSide)
	}
	info.FPS = firstPositive(parseRate(s.AvgFrameRate), parseRate(s.RFrameRate))
	if info.FPS <= 0 {
		return errors.New("video stream has no frame rate")
	}
	info.DurationS = firstPositive(parseFloat(s.Duration), formatDur, info.DurationS)
	info.Frames, _ = strconv.Atoi(s.NbFrames)
	if info.Frames <= 0 {
		info.Frames = int(math.Round(info.DurationS * info.FPS))
	}
	ccw := 0.0
	for _, sd := range s.SideData {
		if sd.Rotation != nil {
			ccw = *sd.Rotation
		}
	}
	if ccw == 0 && s.Tags.Rotate != "" {
		// The legacy tag is clockwise, the display matrix counter-clockwise.
		ccw = -parseFloat(s.Tags.Rotate)
	}
	info.Rotation = normalizeRotation(-ccw)
	info.Width, info.Height = s.Width, s.Height
	if info.Rotation == 90 || info.Rotation == 270 {
		info.Width, info.Height = s.Height, s.Width
	}
	return nil
}

// normalizeRotation maps any angle to the nearest of 0, 90, 180, 270.
func normalizeRotation(deg float64) int {
	r := int(math.Round(deg/90)) * 90 % 360
	if r < 0 {
		r += 360
	}
	return r
}

func parseFloat(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return 0
	}
	return v
}

// parseRate reads FFprobe's "num/den" rates; "0/0" gives 0.
func parseRate(s string) float64 {
	n, d, ok := strings.Cut(s, "/")
	if !ok {
		return parseFloat(s)
	}
	num, den := parseFloat(n), parseFloat(d)
	if den == 0 {
		return 0
	}
	return num / den
}

func firstPositive(v ...float64) float64 {
	for _, x := range v {
		if x > 0 {
			return x
		}
	}
	return 0
}

func firstName(list string) string {
	name, _, _ := strings.Cut(list, ",")
	return name
}
