package media

import (
	"errors"
	"image"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/disintegration/imaging"
)

// TestVideo1080pAtCanvas decodes a 10 s 1080x1920 clip at the 768x1344
// canvas from a start time with a frame bound, and checks chosen frames
// against FFmpeg's unscaled frame at the same instant resized by imaging's
// Lanczos: an independent path for both the timing and the resampling.
func TestVideo1080pAtCanvas(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	src := clip(t, dir, "tall.mp4", 1080, 1920, 30, 10, 0)
	const w, h, maxFrames = 768, 1344, 121
	// 24 and 30 fps meet every 4 output frames; those instants name one
	// source frame without rounding ambiguity.
	check := map[int]string{0: "2", 24: "3", 96: "6"}
	got := map[int]Frame{}
	n, err := tools.DecodeVideo(testCtx(t), src, VideoOptions{Width: w, Height: h, Policy: Cover, Start: 2e9, MaxFrames: maxFrames},
		func(i int, f Frame) error {
			if f.Width != w || f.Height != h || len(f.Pix) != w*h*3 {
				t.Fatalf("frame %d is %dx%d", i, f.Width, f.Height)
			}
			if _, ok := check[i]; ok {
				got[i] = Frame{Width: w, Height: h, Pix: append([]byte(nil), f.Pix...)}
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if n != maxFrames {
		t.Fatalf("decoded %d frames, want the bound %d", n, maxFrames)
	}
	for i, at := range check {
		ref := filepath.Join(dir, "ref"+at+".png")
		ffmpegGen(t, "-ss", at, "-i", src, "-frames:v", "1", ref)
		img, err := DecodeImage(ref)
		if err != nil {
			t.Fatal(err)
		}
		want := FrameFromImage(imaging.Fill(img, w, h, imaging.Center, imaging.Lanczos))
		if p := psnr(want.Pix, got[i].Pix); p < 30 {
			t.Errorf("frame %d (t=%s s): PSNR %.1f dB against the reference, want >= 30", i, at, p)
		} else {
			t.Logf("frame %d (t=%s s): PSNR %.1f dB", i, at, p)
		}
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
