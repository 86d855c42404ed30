package media

import (
	"fmt"
	"image"
	"image/draw"
	"io"
	"os"

	"github.com/disintegration/imaging"

	"h3studio/resample"
)

// Policy is how a picture is brought to a canvas. The planner names one per
// reference; all three resample with Lanczos (a=3), for stills exactly as
// Pillow does (package resample).
type Policy int

const (
	// Stretch scales to exactly the canvas, ignoring aspect ratio.
	Stretch Policy = iota
	// Cover scales (up or down) until the canvas is covered, keeping the
	// aspect ratio, then crops the overflow equally from both sides.
	Cover
	// Fit scales down, keeping the aspect ratio, until the picture fits in
	// the canvas; a picture already inside is left at its size. The result
	// can be smaller than the canvas in one or both axes.
	Fit
)

func (p Policy) String() string {
	switch p {
	case Stretch:
		return "stretch"
	case Cover:
		return "cover"
	case Fit:
		return "fit"
	}
	return fmt.Sprintf("Policy(%d)", int(p))
}

// Frame is one picture as packed 8-bit RGB: row-major, 3 bytes per pixel,
// no row padding, so len(Pix) == Width*Height*3. It is the layout FFmpeg's
// rgb24 pipes carry and the engine's VAE input is made from.
type Frame struct {
	Width, Height int
	Pix           []byte
}

// NewFrame allocates a black frame.
func NewFrame(w, h int) Frame { return Frame{Width: w, Height: h, Pix: make([]byte, w*h*3)} }

// frameBytes is the size of one w x h RGB frame.
func frameBytes(w, h int) int { return w * h * 3 }

// Image returns the frame as an opaque *image.NRGBA (copying the pixels).
func (f Frame) Image() *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, f.Width, f.Height))
	for i, j := 0, 0; i < len(f.Pix); i, j = i+3, j+4 {
		img.Pix[j], img.Pix[j+1], img.Pix[j+2], img.Pix[j+3] = f.Pix[i], f.Pix[i+1], f.Pix[i+2], 0xff
	}
	return img
}

// FrameFromImage converts any image to an RGB frame, compositing
// transparent pixels over black (what the model sees as empty).
func FrameFromImage(img image.Image) Frame {
	b := img.Bounds()
	rgba, ok := img.(*image.RGBA)
	if !ok || rgba.Rect.Min != (image.Point{}) {
		rgba = image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
		draw.Draw(rgba, rgba.Rect, img, b.Min, draw.Src)
	}
	f := NewFrame(b.Dx(), b.Dy())
	// Premultiplied RGBA over black is its RGB.
	for i, j := 0, 0; i < len(f.Pix); i, j = i+3, j+4 {
		f.Pix[i], f.Pix[i+1], f.Pix[i+2] = rgba.Pix[j], rgba.Pix[j+1], rgba.Pix[j+2]
	}
	return f
}

// DecodeImage reads a still (PNG, JPEG, WebP, GIF's first frame, BMP,
// TIFF), refusing other formats and decompression bombs from the header
// alone, and returns it upright: JPEG EXIF orientation is applied.
func DecodeImage(path string) (image.Image, error) {
	if err := checkInput("read image", path); err != nil {
		return nil, err
	}
	head, err := readHead(path)
	if err != nil {
		return nil, fmt.Errorf("media: read image %s: %w", path, err)
	}
	format := sniffImage(head)
	if format == "" {
		if name := otherStill(head); name != "" {
			return nil, mark(ErrUnsupportedStill, fmt.Errorf("media: read image %s: %s images are not supported; convert it to %s", path, name, acceptedStills))
		}
		return nil, mark(ErrNotMedia, fmt.Errorf("media: read image %s: not a %s image", path, acceptedStills))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("media: read image %s: %w", path, err)
	}
	defer f.Close()
	if _, err := stillConfig(path, f); err != nil {
		return nil, err
	}
	orient := orientNormal
	if format == formatJPEG {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("media: read image %s: %w", path, err)
		}
		orient = jpegOrientation(f)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("media: read image %s: %w", path, err)
	}
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, mark(ErrDamaged, fmt.Errorf("media: read image %s: damaged %s data: %w", path, format, err))
	}
	return orient.apply(img), nil
}

// apply turns a stored picture upright. imaging's RotateN turns
// counter-clockwise, EXIF names the clockwise turn.
func (o orientation) apply(img image.Image) image.Image {
	switch o {
	case orientFlipH:
		return imaging.FlipH(img)
	case orientRotate180:
		return imaging.Rotate180(img)
	case orientFlipV:
		return imaging.FlipV(img)
	case orientTranspose:
		return imaging.Transpose(img)
	case orientRotate90:
		return imaging.Rotate270(img)
	case orientTransverse:
		return imaging.Transverse(img)
	case orientRotate270:
		return imaging.Rotate90(img)
	}
	return img
}

// Resize brings img to a w x h canvas under policy p with Lanczos.
// Stretch and Cover return exactly w x h; Fit returns at most w x h.
//
// The resampling is Pillow's (resample.Lanczos, byte for byte what
// Image.resize(size, LANCZOS) gives), so a still reaches the engine exactly
// as the official MiniMax-H3 pipeline prepares it. Cover follows that
// pipeline's rule too (resample.CoverLanczos): scale until the canvas is
// covered, sides rounded half to even, then crop the centre. Transparent
// pixels are composited over black first (FrameFromImage).
func Resize(img image.Image, w, h int, p Policy) (*image.NRGBA, error) {
	if w <= 0 || h <= 0 {
		return nil, fmt.Errorf("media: resize to %dx%d: canvas must be positive", w, h)
	}
	b := img.Bounds()
	if b.Dx() <= 0 || b.Dy() <= 0 {
		return nil, fmt.Errorf("media: resize: empty %dx%d picture", b.Dx(), b.Dy())
	}
	src := FrameFromImage(img)
	rgb := resample.RGB{Width: src.Width, Height: src.Height, Pix: src.Pix}
	var out resample.RGB
	var err error
	switch p {
	case Stretch:
		out, err = resample.Lanczos(rgb, w, h)
	case Cover:
		// Only the kept window is computed, so a 4000x3 strip does not
		// become millions of pixels before the crop.
		out, err = resample.CoverLanczos(rgb, w, h)
	case Fit:
		fw, fh := FitSize(b.Dx(), b.Dy(), w, h)
		out, err = resample.Lanczos(rgb, fw, fh)
	default:
		return nil, fmt.Errorf("media: resize: unknown policy %d", int(p))
	}
	if err != nil {
		return nil, fmt.Errorf("media: %w", err)
	}
	return Frame{Width: out.Width, Height: out.Height, Pix: out.Pix}.Image(), nil
}

// FitSize is the size Fit gives a sw x sh picture in a w x h canvas:
// scaled down to fit with its aspect kept (each side rounded, at least 1
// pixel), or unchanged if it already fits. Stills and video share it.
func FitSize(sw, sh, w, h int) (int, int) {
	if sw <= w && sh <= h {
		return sw, sh
	}
	return scaleToEdge(sw, sh, w, h, true)
}

// coverCrop is the centred part of a sw x sh picture that has the w x h
// canvas's aspect ratio: what video's Cover keeps before FFmpeg scales it
// to w x h. Stills use the official resize-then-crop rule
// (resample.CoverSize), whose window can sit up to a source pixel away.
func coverCrop(sw, sh, w, h int) image.Rectangle {
	cw, ch := sw, sh
	if int64(sw)*int64(h) > int64(sh)*int64(w) {
		cw = max(1, int((int64(sh)*int64(w)+int64(h)/2)/int64(h)))
	} else {
		ch = max(1, int((int64(sw)*int64(h)+int64(w)/2)/int64(w)))
	}
	x, y := (sw-cw)/2, (sh-ch)/2
	return image.Rect(x, y, x+cw, y+ch)
}

// scaleToEdge scales sw x sh so that one side meets the canvas: the
// limiting side when inside is true (fit), the other side otherwise (cover).
func scaleToEdge(sw, sh, w, h int, inside bool) (int, int) {
	// Compare sw/sh with w/h without floating point.
	wider := int64(sw)*int64(h) >= int64(sh)*int64(w)
	if wider == inside {
		return w, max(1, int((int64(sh)*int64(w)+int64(sw)/2)/int64(sw)))
	}
	return max(1, int((int64(sw)*int64(h)+int64(sh)/2)/int64(sh))), h
}

// LoadImage decodes a still and brings it to a w x h canvas under p.
func LoadImage(path string, w, h int, p Policy) (Frame, error) {
	img, err := DecodeImage(path)
	if err != nil {
		return Frame{}, err
	}
	out, err := Resize(img, w, h, p)
	if err != nil {
		return Frame{}, fmt.Errorf("media: %s: %w", path, err)
	}
	return FrameFromImage(out), nil
}
