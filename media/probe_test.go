package media

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestProbeVideoAudio(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	va := clip(t, dir, "va.mp4", 320, 240, 30, 2, 44100)
	v := clip(t, dir, "v.mkv", 176, 144, 25, 1, 0)
	a := filepath.Join(dir, "a.m4a")
	ffmpegGen(t, "-f", "lavfi", "-i", "sine=frequency=300:sample_rate=48000", "-ac", "2", "-t", "1.5", "-c:a", "aac", a)
	rot := filepath.Join(dir, "rot.mp4")
	// FFmpeg 5.1 turns this tag into a display matrix of +90 degrees
	// counter-clockwise; TestProbeRotationMatchesDecodedPixels checks the
	// direction against FFmpeg's own rotated output.
	ffmpegGen(t, "-i", va, "-c", "copy", "-metadata:s:v:0", "rotate=90", rot)

	cases := []struct {
		path string
		want Info
	}{
		{va, Info{Kind: KindVideoAudio, Width: 320, Height: 240, FPS: 30, Frames: 60, DurationS: 2, AudioChannels: 1, AudioRate: 44100}},
		{v, Info{Kind: KindVideo, Width: 176, Height: 144, FPS: 25, Frames: 25, DurationS: 1}},
		{a, Info{Kind: KindAudio, DurationS: 1.5, AudioChannels: 2, AudioRate: 48000}},
		{rot, Info{Kind: KindVideoAudio, Width: 240, Height: 320, Rotation: 270, FPS: 30, Frames: 60, DurationS: 2, AudioChannels: 1, AudioRate: 44100}},
	}
	for _, c := range cases {
		got, err := tools.Probe(testCtx(t), c.path)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		c.want.Path = c.path
		// Containers round durations to their timebase and AAC adds priming.
		if math.Abs(got.DurationS-c.want.DurationS) > 0.05 {
			t.Errorf("%s: duration %.3f, want %.3f", filepath.Base(c.path), got.DurationS, c.want.DurationS)
		}
		got.DurationS = c.want.DurationS
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", filepath.Base(c.path), got, c.want)
		}
	}
}

// Rotation must say where FFmpeg's display-rotated pixels end up: a
// clockwise quarter turn moves the stored top-left corner to the top-right.
func TestProbeRotationMatchesDecodedPixels(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "q.mp4")
	// White square in the stored top-left corner of a 64x32 picture.
	ffmpegGen(t, "-f", "lavfi", "-i", "color=black:size=64x32:rate=24,drawbox=x=0:y=0:w=16:h=16:color=white:t=fill",
		"-t", "0.5", "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", src)
	for _, tag := range []string{"90", "180", "270"} {
		rot := filepath.Join(dir, "rot"+tag+".mp4")
		ffmpegGen(t, "-i", src, "-c", "copy", "-metadata:s:v:0", "rotate="+tag, rot)
		info, err := tools.Probe(testCtx(t), rot)
		if err != nil {
			t.Fatal(err)
		}
		gray := filepath.Join(dir, "f"+tag+".gray")
		ffmpegGen(t, "-i", rot, "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "gray", gray)
		pix, err := os.ReadFile(gray)
		if err != nil {
			t.Fatal(err)
		}
		if len(pix) != info.Width*info.Height {
			t.Fatalf("tag %s: decoded %d bytes, probe says %dx%d", tag, len(pix), info.Width, info.Height)
		}
		w, h := info.Width, info.Height
		lit := func(x, y int) bool { return pix[y*w+x] > 128 }
		var corner int // clockwise turn that moves top-left to where the square is
		switch {
		case lit(2, 2):
			corner = 0
		case lit(w-3, 2):
			corner = 90
		case lit(w-3, h-3):
			corner = 180
		case lit(2, h-3):
			corner = 270
		default:
			t.Fatalf("tag %s: square not found in any corner", tag)
		}
		if info.Rotation != corner {
			t.Errorf("tag %s: probe says rotation %d, FFmpeg's pixels say %d", tag, info.Rotation, corner)
		}
	}
}

func TestProbeBadInputs(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	good := clip(t, dir, "good.mp4", 160, 120, 24, 1, 0)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		path, want string
	}{
		"truncated": {writeFile(t, filepath.Join(dir, "cut.mp4"), data[:len(data)/3]), "not a video or audio file"},
		"zero-byte": {writeFile(t, filepath.Join(dir, "zero.mp4"), nil), "empty"},
		"text.png":  {writeFile(t, filepath.Join(dir, "notes.png"), []byte("hello, not a picture\n")), "content is not a PNG"},
		"text":      {writeFile(t, filepath.Join(dir, "notes.txt"), []byte("hello, not a video\n")), "not a video or audio file"},
		"missing":   {filepath.Join(dir, "nope.mp4"), "no such file"},
		"dir":       {dir, "not a regular file"},
		"playlist": {writeFile(t, filepath.Join(dir, "list.m3u8"),
			[]byte("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n"+good+"\n#EXT-X-ENDLIST\n")), "not a video or audio file"},
		"heic":    {writeFile(t, filepath.Join(dir, "p.heic"), []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic")), "HEIC images are not supported"},
		"url":     {"http://127.0.0.1:9/clip.mp4", "no such file"},
		"concat":  {"concat:" + good + "|" + good, "no such file"},
		"subfile": {"subfile,,start,0,end,100,,:" + good, "no such file"},
	}
	for name, c := range cases {
		_, err := tools.Probe(testCtx(t), c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "@ 0x") {
			t.Errorf("%s: error is not one clean line: %q", name, err)
		}
		t.Logf("%s: %v", name, err)
	}
}

// A name that looks like an option or a protocol is still just a file.
func TestProbeHostileNames(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	good := clip(t, dir, "good.mp4", 64, 64, 24, 0.5, 0)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	for _, name := range []string{"-y.mp4", "concat:x.mp4", "http:x.mp4", "a%d.mp4"} {
		writeFile(t, name, data)
		info, err := tools.Probe(testCtx(t), name)
		if err != nil || info.Kind != KindVideo || info.Width != 64 {
			t.Errorf("%q: %+v %v", name, info, err)
		}
	}
}

func TestMissingFFmpeg(t *testing.T) {
	dir := t.TempDir()
	tools := &Tools{FFmpeg: filepath.Join(dir, "ffmpeg"), FFprobe: filepath.Join(dir, "ffprobe")}
	path := writeFile(t, filepath.Join(dir, "x.mp4"), []byte("not empty"))
	_, err := tools.Probe(testCtx(t), path)
	if !errors.Is(err, ErrNoFFmpeg) {
		t.Fatalf("probe with missing ffprobe: got %v, want ErrNoFFmpeg", err)
	}
	if _, err := tools.Discover(testCtx(t)); !errors.Is(err, ErrNoFFmpeg) {
		t.Fatalf("discover with missing ffmpeg: got %v, want ErrNoFFmpeg", err)
	}
	// A binary that runs but is not FFmpeg.
	if sh, err := exec.LookPath("true"); err == nil {
		if _, err := (&Tools{FFmpeg: sh, FFprobe: sh}).Discover(testCtx(t)); err == nil || !strings.Contains(err.Error(), "really FFmpeg") {
			t.Errorf("discover with %s as ffmpeg: %v", sh, err)
		}
	}
	t.Setenv("PATH", dir)
	if _, err := (&Tools{}).Discover(testCtx(t)); !errors.Is(err, ErrNoFFmpeg) {
		t.Fatalf("discover with empty PATH: got %v, want ErrNoFFmpeg", err)
	}
}

func TestDiscover(t *testing.T) {
	tools := testTools(t)
	c, err := tools.Discover(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.FFmpegVersion == "" || c.FFprobeVersion == "" {
		t.Errorf("versions missing: %+v", c)
	}
	if err := c.Usable(); err != nil {
		t.Errorf("this machine's FFmpeg should be usable: %v", err)
	}
	t.Logf("%+v", c)
}
