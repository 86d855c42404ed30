package app

import (
	"bytes"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// pngOfSize encodes a w x h picture padded with trailing zeros to n bytes
// (decoders stop at IEND), so two pictures can share a size.
func pngOfSize(t *testing.T, w, h, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	if b.Len() > n {
		t.Fatalf("%dx%d encodes to %d bytes, over %d", w, h, b.Len(), n)
	}
	return append(b.Bytes(), make([]byte, n-b.Len())...)
}

// The probe cache answers from (path, size, mtime): a file rewritten with
// the same size and time is not probed again (what makes re-plans cheap),
// and any change of either is.
func TestProbeCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "still.png")
	stamp := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	put := func(w, h int, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, pngOfSize(t, w, h, 4096), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	probe := func(when string, w, h int) {
		t.Helper()
		info, err := Probe(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		if info.Width != w || info.Height != h {
			t.Errorf("%s: probed %dx%d, want %dx%d", when, info.Width, info.Height, w, h)
		}
	}
	put(96, 64, stamp)
	probe("first probe", 96, 64)
	put(64, 96, stamp)
	probe("same size and time", 96, 64)
	put(64, 96, stamp.Add(time.Second))
	probe("new time", 64, 96)
	if err := os.WriteFile(path, pngOfSize(t, 32, 48, 4000), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, stamp.Add(time.Second), stamp.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	probe("new size", 32, 48)
}
