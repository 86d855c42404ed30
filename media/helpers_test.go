package media

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testTools are the binaries on PATH; tests that need FFmpeg skip only when
// it is absent (make test installs it).
func testTools(t testing.TB) *Tools {
	t.Helper()
	tools := &Tools{}
	if _, _, err := tools.ensure(); err != nil {
		t.Skipf("skip: %v", err)
	}
	return tools
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// ffmpegGen runs the FFmpeg CLI to make a test input.
func ffmpegGen(t testing.TB, args ...string) {
	t.Helper()
	full := append([]string{"-nostdin", "-hide_banner", "-v", "error", "-y"}, args...)
	out, err := exec.Command("ffmpeg", full...).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// clip makes a testsrc2 video (with a sine soundtrack when audioHz > 0)
// and returns its path.
func clip(t testing.TB, dir, name string, w, h int, fps, seconds float64, audioHz int) string {
	t.Helper()
	path := filepath.Join(dir, name)
	src, pixFmt := sprintf("testsrc2=size=%dx%d:rate=%g", w, h, fps), "yuv420p"
	if w%2 != 0 || h%2 != 0 {
		// testsrc2 and yuv420p are even-sized; odd sizes need 4:4:4.
		src = sprintf("testsrc2=size=%dx%d:rate=%g,format=yuv444p,crop=%d:%d", w+w%2, h+h%2, fps, w, h)
		pixFmt = "yuv444p"
	}
	args := []string{"-f", "lavfi", "-i", src}
	if audioHz > 0 {
		args = append(args, "-f", "lavfi", "-i", sprintf("sine=frequency=440:sample_rate=%d", audioHz))
	}
	args = append(args, "-t", sprintf("%g", seconds), "-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", pixFmt)
	if audioHz > 0 {
		args = append(args, "-c:a", "aac")
	}
	ffmpegGen(t, append(args, path)...)
	return path
}

// quadrants draws a w x h picture whose four quadrants are red (top-left),
// green (top-right), blue (bottom-left) and white (bottom-right), so any
// rotation or flip is visible from the corners.
func quadrants(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, quadrantColor(x >= w/2, y >= h/2))
		}
	}
	return img
}

func quadrantColor(right, bottom bool) color.NRGBA {
	switch {
	case !right && !bottom:
		return color.NRGBA{255, 0, 0, 255}
	case right && !bottom:
		return color.NRGBA{0, 255, 0, 255}
	case !right && bottom:
		return color.NRGBA{0, 0, 255, 255}
	}
	return color.NRGBA{255, 255, 255, 255}
}

// near reports whether c is within tol of want in every channel.
func near(c color.Color, want color.NRGBA, tol int) bool {
	n := color.NRGBAModel.Convert(c).(color.NRGBA)
	d := func(a, b uint8) bool { v := int(a) - int(b); return v <= tol && v >= -tol }
	return d(n.R, want.R) && d(n.G, want.G) && d(n.B, want.B)
}

func writeFile(t testing.TB, path string, data []byte) string {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// dirEntries lists a directory, for "left nothing behind" checks.
func dirEntries(t testing.TB, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
