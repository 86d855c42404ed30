package media

import (
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/disintegration/imaging"
)

// TestVideo1080pAtCanvas decodes a 10 s 1080x1920 clip at the 768x1344
// canvas from a start time with a frame bound. Chosen frames are compared
// with FFmpeg's unscaled source frames resized by imaging's Lanczos (an
// independent decode path and resampler; only the crop geometry is
// shared): the frame at the right instant must match, and match better
// than its neighbours one source frame earlier or later.
func TestVideo1080pAtCanvas(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	src := clip(t, dir, "tall.mp4", 1080, 1920, 30, 10, 0)
	const w, h, maxFrames = 768, 1344, 121
	// 24 and 30 fps meet every 4 output frames: output frame 0 is source
	// frame 60 (t = 2 s) and output frame 96 is source frame 180 (t = 6 s).
	check := map[int]int{0: 60, 96: 180}
	got := map[int][]byte{}
	n, err := tools.DecodeVideo(testCtx(t), src, VideoOptions{Width: w, Height: h, Policy: Cover, Start: 2e9, MaxFrames: maxFrames},
		func(i int, f Frame) error {
			if f.Width != w || f.Height != h || len(f.Pix) != w*h*3 {
				t.Fatalf("frame %d is %dx%d", i, f.Width, f.Height)
			}
			if _, ok := check[i]; ok {
				got[i] = append([]byte(nil), f.Pix...)
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if n != maxFrames {
		t.Fatalf("decoded %d frames, want the bound %d", n, maxFrames)
	}
	for i, srcFrame := range check {
		var p [3]float64 // PSNR against source frames srcFrame-1, srcFrame, srcFrame+1
		for k := range p {
			// Seek just before the frame's timestamp: FFmpeg returns the
			// first frame at or after it.
			at := fmt.Sprintf("%.4f", float64(srcFrame+k-1)/30-0.005)
			ref := filepath.Join(dir, "ref.png")
			ffmpegGen(t, "-ss", at, "-i", src, "-frames:v", "1", ref)
			img, err := DecodeImage(ref)
			if err != nil {
				t.Fatal(err)
			}
			cover, err := Resize(img, w, h, Cover)
			if err != nil {
				t.Fatal(err)
			}
			p[k] = psnr(FrameFromImage(cover).Pix, got[i])
		}
		// swscale scales 4:2:0 chroma before converting to RGB, imaging
		// after: saturated test-card edges keep the match near 30 dB.
		if p[1] < 27 || p[1] < p[0]+1 || p[1] < p[2]+1 {
			t.Errorf("frame %d: PSNR %.1f dB against source frame %d, %.1f / %.1f against its neighbours; want >= 27 and the best by 1 dB",
				i, p[1], srcFrame, p[0], p[2])
		}
		t.Logf("frame %d: PSNR %.1f dB against source frame %d (neighbours %.1f, %.1f)", i, p[1], srcFrame, p[0], p[2])
	}
}

func TestVideoRatesAndPolicies(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	src := clip(t, dir, "odd.mkv", 333, 181, 30, 3, 0)
	cases := []struct {
		opt          VideoOptions
		frames, w, h int
	}{
		{VideoOptions{Width: 96, Height: 160, Policy: Cover}, 72, 96, 160},
		{VideoOptions{Width: 96, Height: 160, Policy: Stretch, Start: 1e9}, 48, 96, 160},
		{VideoOptions{Width: 768, Height: 1344, Policy: Fit}, 72, 333, 181},            // never enlarged
		{VideoOptions{Width: 160, Height: 160, Policy: Fit, MaxFrames: 5}, 5, 160, 87}, // 181*160/333 = 86.97
		{VideoOptions{Width: 64, Height: 64, FPS: VisionFPS}, 6, 64, 64},
	}
	for _, c := range cases {
		r, err := tools.OpenVideo(testCtx(t), src, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if w, h := r.Size(); w != c.w || h != c.h {
			t.Errorf("%+v: size %dx%d, want %dx%d", c.opt, w, h, c.w, c.h)
		}
		var f Frame
		for err == nil {
			err = r.Next(&f)
		}
		if !errors.Is(err, io.EOF) {
			t.Errorf("%+v: %v", c.opt, err)
		}
		if r.Frames() != c.frames {
			t.Errorf("%+v: %d frames, want %d", c.opt, r.Frames(), c.frames)
		}
		r.Close()
	}
}

func TestVideoCoverCropsCentre(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	// A wide picture with red, green and blue thirds: covering a square
	// canvas must keep only the green middle.
	src := filepath.Join(dir, "bands.mp4")
	ffmpegGen(t, "-f", "lavfi", "-i", "color=red:size=300x100:rate=24,drawbox=x=100:y=0:w=100:h=100:color=lime:t=fill,drawbox=x=200:y=0:w=100:h=100:color=blue:t=fill",
		"-t", "0.25", "-c:v", "libx264", "-preset", "ultrafast", "-qp", "0", "-pix_fmt", "yuv444p", src)
	r, err := tools.OpenVideo(testCtx(t), src, VideoOptions{Width: 64, Height: 64, Policy: Cover})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var f Frame
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	img := f.Image()
	for _, p := range []image.Point{{2, 2}, {61, 2}, {32, 32}, {2, 61}, {61, 61}} {
		if c := img.NRGBAAt(p.X, p.Y); c.G < 200 || c.R > 40 || c.B > 40 {
			t.Errorf("pixel %v is %v, want green", p, c)
		}
	}
}

// A clip cut after its index (faststart) probes fine, but decoding must
// fail rather than quietly deliver a shorter reference.
func TestVideoTruncatedData(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "fs.mp4")
	ffmpegGen(t, "-f", "lavfi", "-i", "testsrc2=size=320x240:rate=24", "-f", "lavfi", "-i", "sine", "-t", "3",
		"-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-movflags", "+faststart", src)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	cut := writeFile(t, filepath.Join(dir, "cut.mp4"), data[:len(data)*6/10])
	_, err = tools.DecodeVideo(testCtx(t), cut, VideoOptions{Width: 64, Height: 64}, func(int, Frame) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "damaged or truncated") {
		t.Errorf("video of a truncated clip: %v", err)
	}
	if _, err := tools.DecodeAudio(testCtx(t), cut, AudioOptions{}); err == nil || !strings.Contains(err.Error(), "damaged or truncated") {
		t.Errorf("audio of a truncated clip: %v", err)
	}
	if _, err := tools.LoadFrames(testCtx(t), cut, FrameStoreOptions{}); err == nil {
		t.Error("frame store of a truncated clip accepted")
	}
	t.Log(err)
}

func TestVideoBadInputs(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	audio := filepath.Join(dir, "song.m4a")
	ffmpegGen(t, "-f", "lavfi", "-i", "sine", "-t", "1", "-c:a", "aac", audio)
	still := filepath.Join(dir, "still.png")
	if err := imaging.Save(quadrants(8, 8), still); err != nil {
		t.Fatal(err)
	}
	short := clip(t, dir, "short.mp4", 64, 64, 24, 1, 0)
	cases := map[string]struct {
		path string
		opt  VideoOptions
		want string
	}{
		"audio-only":  {audio, VideoOptions{Width: 64, Height: 64}, "no video stream"},
		"still":       {still, VideoOptions{Width: 64, Height: 64}, "still image"},
		"past end":    {short, VideoOptions{Width: 64, Height: 64, Start: 5e9}, "past the end"},
		"bad canvas":  {short, VideoOptions{Width: 0, Height: 64}, "invalid options"},
		"zero bytes":  {writeFile(t, filepath.Join(dir, "z.mp4"), nil), VideoOptions{Width: 64, Height: 64}, "empty"},
		"missing bin": {short, VideoOptions{Width: 64, Height: 64}, "ffmpeg not found"},
	}
	for name, c := range cases {
		tt := tools
		if name == "missing bin" {
			tt = &Tools{FFmpeg: filepath.Join(dir, "nope")}
		}
		r, err := tt.OpenVideo(testCtx(t), c.path, c.opt)
		if err == nil {
			r.Close()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, c.want)
		}
	}
}
