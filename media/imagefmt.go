package media

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"strings"

	// Decoders for the accepted still formats beyond the standard library's.
	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/tiff"
	_ "golang.org/x/image/webp"

	_ "image/gif"
	_ "image/jpeg"
	_ "image/png"
)

// Decompression-bomb limits, checked on the header before any pixel is
// decoded. 100 MP covers every phone and camera sensor; a 40000x40000 PNG
// of a few kilobytes would otherwise ask for 6.4 GB.
const (
	MaxImageSide   = 20000
	MaxImagePixels = 100_000_000
)

// Still formats accepted, by sniffed name.
const (
	formatPNG  = "png"
	formatJPEG = "jpeg"
	formatGIF  = "gif"
	formatWebP = "webp"
	formatBMP  = "bmp"
	formatTIFF = "tiff"
)

// acceptedStills is the sentence every refusal of a still ends with.
const acceptedStills = "PNG, JPEG, WebP, GIF, BMP or TIFF"

const headSize = 64

func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	head := make([]byte, headSize)
	n, err := io.ReadFull(f, head)
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	return head[:n], nil
}

// sniffImage names the still format by its magic bytes, or returns "".
// The type comes from the bytes, never the extension.
func sniffImage(h []byte) string {
	switch {
	case bytes.HasPrefix(h, []byte("\x89PNG\r\n\x1a\n")):
		return formatPNG
	case bytes.HasPrefix(h, []byte{0xff, 0xd8, 0xff}):
		return formatJPEG
	case bytes.HasPrefix(h, []byte("GIF87a")), bytes.HasPrefix(h, []byte("GIF89a")):
		return formatGIF
	case len(h) >= 12 && string(h[:4]) == "RIFF" && string(h[8:12]) == "WEBP":
		return formatWebP
	case bytes.HasPrefix(h, []byte("BM")) && len(h) >= 26:
		return formatBMP
	case bytes.HasPrefix(h, []byte("II*\x00")), bytes.HasPrefix(h, []byte("MM\x00*")):
		return formatTIFF
	}
	return ""
}

// otherStill names still formats we recognise but do not decode, so the
// refusal can say what the file is.
func otherStill(h []byte) string {
	if len(h) >= 12 && string(h[4:8]) == "ftyp" {
		switch string(h[8:12]) {
		case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1":
			return "HEIC"
		case "avif", "avis":
			return "AVIF"
		}
	}
	if bytes.HasPrefix(h, []byte{0xff, 0x0a}) || bytes.HasPrefix(h, []byte("\x00\x00\x00\x0cJXL ")) {
		return "JPEG XL"
	}
	return ""
}

var stillExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true,
	".bmp": true, ".tif": true, ".tiff": true, ".heic": true, ".avif": true,
}

// refuseStillLookalike stops files that are not decodable stills before
// they reach FFmpeg: a known-but-unsupported still format, or a file whose
// name says picture while its bytes say otherwise (a text file named .png).
func refuseStillLookalike(path string, head []byte) error {
	if name := otherStill(head); name != "" {
		return mark(ErrUnsupportedStill, fmt.Errorf("media: %s: %s images are not supported; convert it to %s", path, name, acceptedStills))
	}
	if ext := strings.ToLower(filepath.Ext(path)); stillExts[ext] {
		return mark(ErrNotMedia, fmt.Errorf("media: %s: named %s but its content is not a %s image; re-export it", path, ext, acceptedStills))
	}
	return nil
}

// stillConfig reads the header of a still and applies the bomb limits.
func stillConfig(path string, r io.Reader) (image.Config, error) {
	cfg, _, err := image.DecodeConfig(r)
	if err != nil {
		return cfg, mark(ErrDamaged, fmt.Errorf("media: read image %s: damaged or truncated header: %w", path, err))
	}
	return cfg, checkStillSize(path, cfg.Width, cfg.Height)
}

func checkStillSize(path string, w, h int) error {
	if w <= 0 || h <= 0 {
		return mark(ErrDamaged, fmt.Errorf("media: read image %s: header says %dx%d pixels", path, w, h))
	}
	if w > MaxImageSide || h > MaxImageSide || int64(w)*int64(h) > MaxImagePixels {
		return mark(ErrTooLarge, fmt.Errorf("media: read image %s: %dx%d pixels is over the %d-pixel side / %d MP limit; downscale it first",
			path, w, h, MaxImageSide, MaxImagePixels/1_000_000))
	}
	return nil
}

// probeImage describes a still from its header and EXIF alone.
func probeImage(path, format string) (Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return Info{}, fmt.Errorf("media: probe %s: %w", path, err)
	}
	defer f.Close()
	cfg, err := stillConfig(path, f)
	if err != nil {
		return Info{}, err
	}
	orient := orientNormal
	if format == formatJPEG {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return Info{}, fmt.Errorf("media: probe %s: %w", path, err)
		}
		orient = jpegOrientation(f)
	}
	info := Info{Path: path, Kind: KindImage, Width: cfg.Width, Height: cfg.Height,
		Rotation: orient.rotation(), Frames: 1}
	if orient.swapsAxes() {
		info.Width, info.Height = cfg.Height, cfg.Width
	}
	return info, nil
}

// orientation is the EXIF Orientation tag (1..8).
type orientation int

const (
	orientNormal     orientation = 1
	orientFlipH      orientation = 2
	orientRotate180  orientation = 3
	orientFlipV      orientation = 4
	orientTranspose  orientation = 5
	orientRotate90   orientation = 6 // display = stored turned 90 degrees clockwise
	orientTransverse orientation = 7
	orientRotate270  orientation = 8
)

func (o orientation) swapsAxes() bool { return o >= orientTranspose && o <= orientRotate270 }

// rotation is the clockwise turn the orientation implies (mirrors ignored).
func (o orientation) rotation() int {
	switch o {
	case orientRotate180, orientFlipV:
		return 180
	case orientRotate90, orientTranspose:
		return 90
	case orientRotate270, orientTransverse:
		return 270
	}
	return 0
}

// jpegOrientation scans the JPEG markers up to the first scan for an
// Exif APP1 segment and returns its Orientation, or orientNormal.
func jpegOrientation(r io.Reader) orientation {
	br := &byteReader{r: r}
	if br.u16() != 0xffd8 {
		return orientNormal
	}
	for br.err == nil {
		marker := br.u16()
		if marker&0xff00 != 0xff00 || marker == 0xffda || marker == 0xffd9 {
			return orientNormal
		}
		n := int(br.u16()) - 2
		if n < 0 || br.err != nil {
			return orientNormal
		}
		seg := br.bytes(n)
		if marker == 0xffe1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) {
			return exifOrientation(seg[6:])
		}
	}
	return orientNormal
}

// exifOrientation reads tag 0x0112 from IFD0 of a TIFF-structured block.
func exifOrientation(t []byte) orientation {
	if len(t) < 8 {
		return orientNormal
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return orientNormal
	}
	ifd := int(bo.Uint32(t[4:8]))
	if ifd < 8 || ifd+2 > len(t) {
		return orientNormal
	}
	count := int(bo.Uint16(t[ifd:]))
	for i := 0; i < count; i++ {
		e := ifd + 2 + 12*i
		if e+12 > len(t) {
			break
		}
		if bo.Uint16(t[e:]) == 0x0112 {
			o := orientation(bo.Uint16(t[e+8:]))
			if o >= orientNormal && o <= orientRotate270 {
				return o
			}
			return orientNormal
		}
	}
	return orientNormal
}

// byteReader reads big-endian fields and remembers the first error.
type byteReader struct {
	r   io.Reader
	err error
}

func (b *byteReader) bytes(n int) []byte {
	if b.err != nil {
		return nil
	}
	p := make([]byte, n)
	_, b.err = io.ReadFull(b.r, p)
	return p
}

func (b *byteReader) u16() uint16 {
	p := b.bytes(2)
	if b.err != nil {
		return 0
	}
	return binary.BigEndian.Uint16(p)
}
