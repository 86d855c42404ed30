package media

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"
)

// Fuzz targets for every parser that reads bytes from a user's file or
// from FFprobe. Seeds are built here; `go test` runs them, `go test -fuzz`
// explores further. Sizes are capped as image/png's fuzz test does.
const fuzzMaxInput = 1 << 20

func FuzzReadWAV(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "s.wav")
	if err := WriteWAV(path, stereoSine(64, 100, 200)); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:50])
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > fuzzMaxInput {
			return
		}
		pcm, err := readWAV(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		if pcm.Channels < 1 || len(pcm.Samples)%pcm.Channels != 0 || len(pcm.Samples) > len(b) {
			t.Fatalf("accepted %d samples, %d channels from %d bytes", len(pcm.Samples), pcm.Channels, len(b))
		}
	})
}

func FuzzJPEGOrientation(f *testing.F) {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, quadrants(8, 8), nil); err != nil {
		f.Fatal(err)
	}
	f.Add(withEXIFOrientation(buf.Bytes(), orientRotate90, binary.LittleEndian))
	f.Add(withEXIFOrientation(buf.Bytes(), orientTransverse, binary.BigEndian))
	f.Fuzz(func(t *testing.T, b []byte) {
		if o := jpegOrientation(bytes.NewReader(b)); o < orientNormal || o > orientRotate270 {
			t.Fatalf("orientation %d", o)
		}
	})
}

func FuzzParseProbe(f *testing.F) {
	f.Add([]byte(`{"streams":[{"codec_type":"video","width":1080,"height":1920,"avg_frame_rate":"30/1","nb_frames":"300","duration":"10.0",
		"side_data_list":[{"rotation":-90}]},{"codec_type":"audio","channels":2,"sample_rate":"48000","duration":"10.0"}],"format":{"duration":"10.0"}}`))
	f.Add([]byte(`{"streams":[{"codec_type":"video","width":0,"height":-1,"avg_frame_rate":"0/0"}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := parseProbe("x", b)
		if err != nil {
			return
		}
		if info.Width < 0 || info.Height < 0 || info.DurationS <= 0 || info.Rotation%90 != 0 || info.Rotation < 0 || info.Rotation >= 360 {
			t.Fatalf("accepted %+v", info)
		}
		if info.HasVideo() && (info.Width == 0 || info.FPS <= 0) {
			t.Fatalf("video without size or rate: %+v", info)
		}
	})
}

func FuzzSplitJPEGs(f *testing.F) {
	var buf bytes.Buffer
	for i := 0; i < 2; i++ {
		if err := jpeg.Encode(&buf, quadrants(16, 8), nil); err != nil {
			f.Fatal(err)
		}
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > fuzzMaxInput {
			return
		}
		total := 0
		_ = splitJPEGs(bufio.NewReader(bytes.NewReader(b)), func(img []byte) { total += len(img) })
		if total > len(b) {
			t.Fatalf("emitted %d bytes from %d", total, len(b))
		}
	})
}

// FuzzStillHeader: whatever a still's header claims, probing it either
// fails or reports a size inside the decompression-bomb limits.
func FuzzStillHeader(f *testing.F) {
	f.Add(pngHeader(40000, 40000))
	f.Add(pngHeader(64, 48))
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, quadrants(8, 8), nil); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > fuzzMaxInput {
			return
		}
		format := sniffImage(b)
		if format == "" {
			return
		}
		path := filepath.Join(dir, "still")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		info, err := probeImage(path, format)
		if err != nil {
			return
		}
		if info.Width <= 0 || info.Height <= 0 || info.Width > MaxImageSide || info.Height > MaxImageSide ||
			int64(info.Width)*int64(info.Height) > MaxImagePixels {
			t.Fatalf("accepted %dx%d", info.Width, info.Height)
		}
	})
}
