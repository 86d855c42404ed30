package media

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/color/palette"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
	"golang.org/x/image/tiff"
)

// checkQuadrants asserts the four quadrant colours of a decoded picture,
// sampling the centre of each quadrant.
func checkQuadrants(t *testing.T, name string, img image.Image, tol int) {
	t.Helper()
	b := img.Bounds()
	for _, q := range []struct{ right, bottom bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		x, y := b.Min.X+b.Dx()/4, b.Min.Y+b.Dy()/4
		if q.right {
			x += b.Dx() / 2
		}
		if q.bottom {
			y += b.Dy() / 2
		}
		if c := img.At(x, y); !near(c, quadrantColor(q.right, q.bottom), tol) {
			t.Errorf("%s: pixel (%d,%d) is %v, want %v", name, x, y, c, quadrantColor(q.right, q.bottom))
		}
	}
}

func encodeTo(t *testing.T, path string, enc func(*os.File) error) string {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := enc(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestDecodeEveryFormat(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	const w, h = 37, 23 // odd on purpose
	img := quadrants(w, h)
	pal := image.NewPaletted(img.Rect, palette.Plan9)
	draw.Draw(pal, pal.Rect, img, image.Point{}, draw.Src)
	second := image.NewPaletted(img.Rect, palette.Plan9) // all black: must not be the frame returned
	paths := map[string]string{
		"png":  encodeTo(t, filepath.Join(dir, "a.png"), func(f *os.File) error { return png.Encode(f, img) }),
		"jpeg": encodeTo(t, filepath.Join(dir, "a.jpg"), func(f *os.File) error { return jpeg.Encode(f, img, &jpeg.Options{Quality: 95}) }),
		"gif": encodeTo(t, filepath.Join(dir, "a.gif"), func(f *os.File) error {
			return gif.EncodeAll(f, &gif.GIF{Image: []*image.Paletted{pal, second}, Delay: []int{10, 10}})
		}),
		"bmp":  encodeTo(t, filepath.Join(dir, "a.bmp"), func(f *os.File) error { return bmp.Encode(f, img) }),
		"tiff": encodeTo(t, filepath.Join(dir, "a.tif"), func(f *os.File) error { return tiff.Encode(f, img, nil) }),
	}
	paths["webp"] = filepath.Join(dir, "a.webp")
	ffmpegGen(t, "-i", paths["png"], "-c:v", "libwebp", "-lossless", "1", paths["webp"])
	for name, path := range paths {
		got, err := DecodeImage(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got.Bounds().Dx() != w || got.Bounds().Dy() != h {
			t.Errorf("%s: %v, want %dx%d", name, got.Bounds(), w, h)
		}
		tol := 2
		if name == "jpeg" {
			tol = 40 // chroma subsampling blurs the quadrant edges
		}
		checkQuadrants(t, name, got, tol)
		info, err := tools.Probe(testCtx(t), path)
		if err != nil || info.Kind != KindImage || info.Width != w || info.Height != h || info.Frames != 1 {
			t.Errorf("%s: probe %+v %v", name, info, err)
		}
	}
}

// withEXIFOrientation inserts an Exif APP1 segment carrying one
// Orientation entry right after the JPEG's SOI marker.
func withEXIFOrientation(jpg []byte, o orientation, bo interface {
	binary.ByteOrder
	binary.AppendByteOrder
}) []byte {
	var tiffHdr []byte
	if bo == binary.LittleEndian {
		tiffHdr = []byte("II*\x00")
	} else {
		tiffHdr = []byte("MM\x00*")
	}
	ifd := bo.AppendUint32(tiffHdr, 8)
	ifd = bo.AppendUint16(ifd, 1)      // one entry
	ifd = bo.AppendUint16(ifd, 0x0112) // Orientation
	ifd = bo.AppendUint16(ifd, 3)      // SHORT
	ifd = bo.AppendUint32(ifd, 1)
	ifd = bo.AppendUint16(ifd, uint16(o))
	ifd = append(ifd, 0, 0, 0, 0, 0, 0) // value padding, next IFD = 0
	seg := append([]byte("Exif\x00\x00"), ifd...)
	app1 := binary.BigEndian.AppendUint16([]byte{0xff, 0xe1}, uint16(len(seg)+2))
	out := append([]byte(nil), jpg[:2]...)
	out = append(out, app1...)
	out = append(out, seg...)
	return append(out, jpg[2:]...)
}

func TestEXIFOrientation(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, quadrants(64, 32), &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	red, green, blue, white := quadrantColor(false, false), quadrantColor(true, false), quadrantColor(false, true), quadrantColor(true, true)
	// Where the stored corners land once the picture is upright
	// (top-left, top-right, bottom-left, bottom-right), per the EXIF spec.
	cases := []struct {
		o        orientation
		rotation int
		w, h     int
		corners  [4]color.NRGBA
	}{
		{orientNormal, 0, 64, 32, [4]color.NRGBA{red, green, blue, white}},
		{orientFlipH, 0, 64, 32, [4]color.NRGBA{green, red, white, blue}},
		{orientRotate180, 180, 64, 32, [4]color.NRGBA{white, blue, green, red}},
		{orientRotate90, 90, 32, 64, [4]color.NRGBA{blue, red, white, green}},
		{orientRotate270, 270, 32, 64, [4]color.NRGBA{green, white, red, blue}},
		{orientTranspose, 90, 32, 64, [4]color.NRGBA{red, blue, green, white}},
	}
	for _, c := range cases {
		for _, bo := range []interface {
			binary.ByteOrder
			binary.AppendByteOrder
		}{binary.LittleEndian, binary.BigEndian} {
			path := writeFile(t, filepath.Join(dir, "o.jpg"), withEXIFOrientation(buf.Bytes(), c.o, bo))
			img, err := DecodeImage(path)
			if err != nil {
				t.Fatal(err)
			}
			b := img.Bounds()
			if b.Dx() != c.w || b.Dy() != c.h {
				t.Errorf("orientation %d: %dx%d, want %dx%d", c.o, b.Dx(), b.Dy(), c.w, c.h)
				continue
			}
			pts := []image.Point{{4, 4}, {c.w - 5, 4}, {4, c.h - 5}, {c.w - 5, c.h - 5}}
			for i, p := range pts {
				if col := img.At(b.Min.X+p.X, b.Min.Y+p.Y); !near(col, c.corners[i], 40) {
					t.Errorf("orientation %d (%v): corner %d is %v, want %v", c.o, bo, i, col, c.corners[i])
				}
			}
			info, err := probeImage(path, formatJPEG)
			if err != nil || info.Rotation != c.rotation || info.Width != c.w || info.Height != c.h {
				t.Errorf("orientation %d: probe %+v %v, want rotation %d", c.o, info, err, c.rotation)
			}
		}
	}
}

// pngHeader writes a PNG signature and a valid IHDR claiming w x h, with
// no pixel data: the shape of a decompression bomb's first bytes.
func pngHeader(w, h uint32) []byte {
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 6, 0, 0, 0) // 8-bit RGBA
	chunk := append([]byte("IHDR"), ihdr...)
	out := append([]byte("\x89PNG\r\n\x1a\n"), binary.BigEndian.AppendUint32(nil, 13)...)
	out = append(out, chunk...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(chunk))
}

func TestImageBadInputs(t *testing.T) {
	dir := t.TempDir()
	var good bytes.Buffer
	if err := png.Encode(&good, quadrants(64, 64)); err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		data []byte
		name string
		want string
	}{
		"bomb":      {pngHeader(40000, 40000), "bomb.png", "40000x40000 pixels is over"},
		"wide bomb": {pngHeader(200000, 10), "wide.png", "over"},
		"truncated": {good.Bytes()[:good.Len()/2], "cut.png", "damaged png data"},
		"zero":      {nil, "zero.png", "empty"},
		"text":      {[]byte("just text\n"), "text.png", "not a PNG, JPEG"},
		"heic":      {[]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), "p.heic", "HEIC images are not supported"},
	}
	for name, c := range cases {
		path := writeFile(t, filepath.Join(dir, c.name), c.data)
		_, err := DecodeImage(path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", name, err, c.want)
		}
	}
	if _, err := Probe(testCtx(t), writeFile(t, filepath.Join(dir, "b.png"), pngHeader(40000, 40000))); err == nil || !strings.Contains(err.Error(), "over") {
		t.Errorf("probe of a 40000x40000 header: %v", err)
	}
}

// bands is a w x h picture in vertical red, green and blue thirds.
func bands(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	cols := []color.NRGBA{{255, 0, 0, 255}, {0, 255, 0, 255}, {0, 0, 255, 255}}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.SetNRGBA(x, y, cols[x*3/w])
		}
	}
	return img
}

func TestResizePolicies(t *testing.T) {
	src := bands(300, 100)
	green := color.NRGBA{0, 255, 0, 255}
	cover, err := Resize(src, 90, 90, Cover)
	if err != nil {
		t.Fatal(err)
	}
	if cover.Bounds().Dx() != 90 || cover.Bounds().Dy() != 90 || !near(cover.At(3, 45), green, 8) || !near(cover.At(86, 45), green, 8) {
		t.Errorf("cover of 3:1 bands into a square must keep only the green middle, got %v at the left edge", cover.At(3, 45))
	}
	stretch, _ := Resize(src, 90, 90, Stretch)
	if !near(stretch.At(3, 45), color.NRGBA{255, 0, 0, 255}, 8) || !near(stretch.At(86, 45), color.NRGBA{0, 0, 255, 255}, 8) {
		t.Errorf("stretch must keep all three bands")
	}
	sizes := []struct{ sw, sh, w, h, fw, fh int }{
		{300, 100, 90, 90, 90, 30},
		{100, 300, 768, 1344, 100, 300}, // already inside: not enlarged
		{1920, 1080, 768, 1344, 768, 432},
		{1080, 1920, 768, 1344, 756, 1344},
		{4001, 3, 768, 1344, 768, 1}, // extreme aspect keeps one row
		{37, 23, 16, 16, 16, 10},
	}
	for _, s := range sizes {
		got, err := Resize(image.NewNRGBA(image.Rect(0, 0, s.sw, s.sh)), s.w, s.h, Fit)
		if err != nil || got.Bounds().Dx() != s.fw || got.Bounds().Dy() != s.fh {
			t.Errorf("fit %dx%d into %dx%d: %v %v, want %dx%d", s.sw, s.sh, s.w, s.h, got.Bounds(), err, s.fw, s.fh)
		}
		for _, p := range []Policy{Stretch, Cover} {
			got, err := Resize(image.NewNRGBA(image.Rect(0, 0, s.sw, s.sh)), s.w, s.h, p)
			if err != nil || got.Bounds().Dx() != s.w || got.Bounds().Dy() != s.h {
				t.Errorf("%v %dx%d into %dx%d: %v %v", p, s.sw, s.sh, s.w, s.h, got.Bounds(), err)
			}
		}
	}
	if _, err := Resize(src, 0, 10, Fit); err == nil {
		t.Error("zero canvas accepted")
	}
}

// TestLanczosAgainstFFmpeg resizes a smooth picture with Stretch and with
// FFmpeg's Lanczos scaler; two independent Lanczos implementations agree
// to within rounding and edge handling.
func TestLanczosAgainstFFmpeg(t *testing.T) {
	testTools(t)
	dir := t.TempDir()
	src := image.NewNRGBA(image.Rect(0, 0, 301, 203))
	for y := 0; y < 203; y++ {
		for x := 0; x < 301; x++ {
			src.SetNRGBA(x, y, color.NRGBA{uint8(128 + 120*math.Sin(float64(x)/17)), uint8(y), uint8(128 + 120*math.Cos(float64(x+y)/23)), 255})
		}
	}
	in := encodeTo(t, filepath.Join(dir, "in.png"), func(f *os.File) error { return png.Encode(f, src) })
	ref := filepath.Join(dir, "ref.png")
	ffmpegGen(t, "-i", in, "-vf", "scale=128:96:flags=lanczos+accurate_rnd+full_chroma_int", "-pix_fmt", "rgb24", ref)
	want, err := DecodeImage(ref)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Resize(src, 128, 96, Stretch)
	if err != nil {
		t.Fatal(err)
	}
	a, b := FrameFromImage(got), FrameFromImage(want)
	var sum float64
	for i := range a.Pix {
		sum += math.Abs(float64(a.Pix[i]) - float64(b.Pix[i]))
	}
	mean := sum / float64(len(a.Pix))
	if mean > 1.5 {
		t.Errorf("mean absolute difference from FFmpeg's Lanczos %.2f levels, want <= 1.5", mean)
	}
	t.Logf("mean absolute difference from FFmpeg's Lanczos: %.3f levels", mean)
}

func TestFrameImageRoundTrip(t *testing.T) {
	img := quadrants(5, 3)
	f := FrameFromImage(img)
	if len(f.Pix) != 5*3*3 {
		t.Fatalf("%d bytes", len(f.Pix))
	}
	back := f.Image()
	if !bytes.Equal(back.Pix, img.Pix) {
		t.Errorf("Frame round trip changed pixels")
	}
}
