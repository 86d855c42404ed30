package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// movingFrame draws a smooth gradient that shifts with i, easy for H.264
// so the round trip can be held to a tight PSNR.
func movingFrame(w, h, i int) Frame {
	f := NewFrame(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			o := (y*w + x) * 3
			f.Pix[o] = uint8((x + 2*i) * 255 / (w + 200))
			f.Pix[o+1] = uint8(y * 255 / h)
			f.Pix[o+2] = uint8(128 + 100*math.Sin(float64(x+y+4*i)/40))
		}
	}
	return f
}

func stereoSine(frames int, hzL, hzR float64) PCM {
	p := PCM{Rate: SampleRate, Channels: Channels, Samples: make([]float32, frames*2)}
	for n := 0; n < frames; n++ {
		t := float64(n) / SampleRate
		p.Samples[2*n] = float32(0.5 * math.Sin(2*math.Pi*hzL*t))
		p.Samples[2*n+1] = float32(0.25 * math.Sin(2*math.Pi*hzR*t))
	}
	return p
}

type ffprobeCount struct {
	Streams []struct {
		CodecType    string `json:"codec_type"`
		CodecName    string `json:"codec_name"`
		PixFmt       string `json:"pix_fmt"`
		SampleRate   string `json:"sample_rate"`
		Channels     int    `json:"channels"`
		StartTime    string `json:"start_time"`
		Duration     string `json:"duration"`
		NbReadFrames string `json:"nb_read_frames"`
		AvgFrameRate string `json:"avg_frame_rate"`
	} `json:"streams"`
}

// ffprobeCounted runs the FFprobe CLI, counting decoded frames: the
// independent view of what EncodeMP4 wrote.
func ffprobeCounted(t *testing.T, path string) ffprobeCount {
	t.Helper()
	out, err := exec.Command("ffprobe", "-v", "error", "-count_frames", "-of", "json", "-show_entries",
		"stream=codec_type,codec_name,pix_fmt,sample_rate,channels,start_time,duration,nb_read_frames,avg_frame_rate", path).Output()
	if err != nil {
		t.Fatalf("ffprobe %s: %v", path, err)
	}
	var c ffprobeCount
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMP4RoundTrip(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	const w, h, n = 256, 448, 53
	audio := stereoSine(n*SampleRate/FPS, 440, 660)
	frames := make([]Frame, n)
	for i := range frames {
		frames[i] = movingFrame(w, h, i)
	}
	dst := filepath.Join(dir, "out.mp4")
	pngs := filepath.Join(dir, "frames")
	opt := EncodeOptions{Width: w, Height: h, Audio: audio, Preset: "veryfast", FramesDir: pngs}
	if err := tools.EncodeMP4(testCtx(t), dst, opt, frames); err != nil {
		t.Fatal(err)
	}
	if got := dirEntries(t, dir); len(got) != 2 {
		t.Errorf("destination folder holds %v, want only out.mp4 and frames", got)
	}
	if got := len(dirEntries(t, pngs)); got != n {
		t.Errorf("frames folder has %d PNGs, want %d", got, n)
	}

	// faststart: the index (moov) precedes the media data (mdat), so a
	// player can start before the whole file is read.
	data, err := os.ReadFile(dst)
	if err != nil {
		t.Fatal(err)
	}
	if m, d := bytes.Index(data, []byte("moov")), bytes.Index(data, []byte("mdat")); m < 0 || d < 0 || m > d {
		t.Errorf("moov at %d, mdat at %d: not faststart", m, d)
	}

	checkStreams(t, dst, n)
	checkRoundTrip(t, tools, dst, frames, audio)
}

// checkStreams probes the MP4's two streams: codecs, rates, frame count and
// A/V sync within a frame.
func checkStreams(t *testing.T, dst string, n int) {
	t.Helper()
	c := ffprobeCounted(t, dst)
	if len(c.Streams) != 2 {
		t.Fatalf("streams %+v, want video and audio", c.Streams)
	}
	v, a := c.Streams[0], c.Streams[1]
	if v.CodecType != "video" || v.CodecName != "h264" || v.PixFmt != "yuv420p" || v.AvgFrameRate != "24/1" {
		t.Errorf("video stream %+v, want h264 yuv420p 24/1", v)
	}
	if a.CodecType != "audio" || a.CodecName != "aac" || a.SampleRate != "32000" || a.Channels != 2 {
		t.Errorf("audio stream %+v, want aac 32000 Hz stereo", a)
	}
	if got, _ := strconv.Atoi(v.NbReadFrames); got != n {
		t.Errorf("decoded %d video frames, want %d", got, n)
	}
	frame := 1.0 / FPS
	vDur, aDur := parseFloat(v.Duration), parseFloat(a.Duration)
	if math.Abs(vDur-float64(n)/FPS) > frame/2 {
		t.Errorf("video duration %.4f s, want %.4f", vDur, float64(n)/FPS)
	}
	vStart, aStart := parseFloat(v.StartTime), parseFloat(a.StartTime)
	if math.Abs(vStart-aStart) >= frame || math.Abs(vDur-aDur) >= frame {
		t.Errorf("A/V out of sync: video %.4f+%.4f s, audio %.4f+%.4f s", vStart, vDur, aStart, aDur)
	}
	t.Logf("video start %.4f dur %.4f; audio start %.4f dur %.4f", vStart, vDur, aStart, aDur)

}

// checkRoundTrip decodes the MP4 with our own decoders: every frame's PSNR
// against what was encoded, and the soundtrack aligned to the sample.
func checkRoundTrip(t *testing.T, tools *Tools, dst string, frames []Frame, audio PCM) {
	t.Helper()
	// Pixels back through our own decoder.
	var worst float64 = 99
	_, err := tools.DecodeVideo(testCtx(t), dst, VideoOptions{Width: frames[0].Width, Height: frames[0].Height}, func(i int, f Frame) error {
		worst = math.Min(worst, psnr(frames[i].Pix, f.Pix))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if worst < 35 {
		t.Errorf("worst frame PSNR %.1f dB, want >= 35", worst)
	}
	t.Logf("worst frame PSNR %.1f dB", worst)

	// The soundtrack back, aligned to the sample: AAC's priming delay must
	// be compensated by the MP4 edit list.
	back, err := tools.DecodeAudio(testCtx(t), dst, AudioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lag, snr := bestLag(audio.Samples, back.Samples, 64)
	if lag != 0 || snr < 20 {
		t.Errorf("audio back: best lag %d samples, SNR %.1f dB; want lag 0 and >= 20 dB", lag, snr)
	}
	t.Logf("audio SNR %.1f dB at lag %d", snr, lag)
}

func psnr(a, b []byte) float64 {
	var se float64
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		se += d * d
	}
	if se == 0 {
		return 99
	}
	return 10 * math.Log10(255*255/(se/float64(len(a))))
}

// bestLag finds the shift of got (in sample frames, |lag| <= maxLag) that
// best matches want on the left channel, and the SNR there.
func bestLag(want, got []float32, maxLag int) (int, float64) {
	best, bestSNR := 0, math.Inf(-1)
	frames := min(len(want), len(got))/2 - 2*maxLag
	for lag := -maxLag; lag <= maxLag; lag++ {
		var sig, noise float64
		for n := maxLag; n < frames; n++ {
			x, y := float64(want[2*n]), float64(got[2*(n+lag)])
			sig += x * x
			noise += (x - y) * (x - y)
		}
		if snr := 10 * math.Log10(sig/noise); snr > bestSNR {
			best, bestSNR = lag, snr
		}
	}
	return best, bestSNR
}

func TestMP4CancelLeavesNothing(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	dst := filepath.Join(dir, "out.mp4")
	ctx, cancel := context.WithCancel(testCtx(t))
	const w, h = 768, 1344
	wr, err := tools.CreateMP4(ctx, dst, EncodeOptions{Width: w, Height: h, Audio: stereoSine(SampleRate*5, 440, 440),
		FramesDir: filepath.Join(dir, "frames")})
	if err != nil {
		t.Fatal(err)
	}
	f := movingFrame(w, h, 0)
	for i := 0; i < 5; i++ {
		if err := wr.WriteFrame(f); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	for i := 0; i < 100 && err == nil; i++ {
		err = wr.WriteFrame(f)
	}
	if cerr := wr.Close(); !errors.Is(cerr, context.Canceled) {
		t.Errorf("Close after cancel: %v, want context.Canceled", cerr)
	}
	if got := dirEntries(t, dir); len(got) != 0 {
		t.Errorf("cancelled encode left %v behind", got)
	}
}

func TestMP4BadOptions(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	cases := []EncodeOptions{
		{Width: 255, Height: 448},
		{Width: 256, Height: 448, FPS: -1},
		{Width: 256, Height: 448, Audio: PCM{Rate: 32000, Channels: 2, Samples: make([]float32, 3)}},
	}
	for _, o := range cases {
		if _, err := tools.CreateMP4(testCtx(t), filepath.Join(dir, "x.mp4"), o); err == nil {
			t.Errorf("%+v: accepted", o)
		}
	}
	if _, err := tools.CreateMP4(testCtx(t), filepath.Join(dir, "missing", "x.mp4"), EncodeOptions{Width: 2, Height: 2}); err == nil {
		t.Error("missing destination folder accepted")
	}
	noFFmpeg := &Tools{FFmpeg: filepath.Join(dir, "ffmpeg")}
	if _, err := noFFmpeg.CreateMP4(testCtx(t), filepath.Join(dir, "x.mp4"), EncodeOptions{Width: 2, Height: 2}); !errors.Is(err, ErrNoFFmpeg) {
		t.Errorf("encode without ffmpeg: %v, want ErrNoFFmpeg", err)
	}
	wr, err := tools.CreateMP4(testCtx(t), filepath.Join(dir, "x.mp4"), EncodeOptions{Width: 64, Height: 64})
	if err != nil {
		t.Fatal(err)
	}
	if err := wr.WriteFrame(NewFrame(32, 32)); err == nil {
		t.Error("wrong frame size accepted")
	}
	if err := wr.Close(); err == nil {
		t.Error("Close with no frames succeeded")
	}
	if got := dirEntries(t, dir); len(got) != 0 {
		t.Errorf("failed encodes left %v behind", got)
	}
}
