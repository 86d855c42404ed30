package app

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"h3studio/media"
)

// A file read once is ready again from the caches, with the thumbnail
// made the first time; once the file changes it must be read again, so
// Reuse never shows a stale picture or a stale verdict.
func TestReadyReferenceFollowsTheFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "still.png")
	writePNG(t, path, 320, 200)
	if _, _, _, ok := ReadyReference(ctx, path, ""); ok {
		t.Fatal("ready before the file was ever read")
	}
	if _, _, err := AddableReference(ctx, path, ""); err != nil {
		t.Fatal(err)
	}
	th, err := Thumbnail(ctx, path, ThumbSide)
	if err != nil {
		t.Fatal(err)
	}
	if b := th.Bounds(); b.Dx() != ThumbSide || b.Dy() != ThumbSide*200/320 {
		t.Errorf("thumbnail %v, want %dx%d", b, ThumbSide, ThumbSide*200/320)
	}
	ref, info, again, ok := ReadyReference(ctx, path, "")
	if !ok || ref.Kind != RefImage || info.Width != 320 || again != th {
		t.Fatalf("ready %v: %+v %+v, same thumbnail %v", ok, ref, info, again == th)
	}
	writePNG(t, path, 64, 64)
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if _, _, _, ok := ReadyReference(ctx, path, ""); ok {
		t.Error("ready after the file changed")
	}
	if _, ok := CachedThumbnail(path, ThumbSide); ok {
		t.Error("a thumbnail of the old file is served for the new one")
	}
}

// An audio file's thumbnail is its waveform: ink where the sound is, a
// blank line where it is silent.
func TestThumbnailOfAudioIsItsWaveform(t *testing.T) {
	n := media.SampleRate
	pcm := media.PCM{Rate: media.SampleRate, Channels: 2, Samples: make([]float32, 2*n)}
	for i := n / 2; i < n; i++ { // silent first half, full scale after
		v := float32(1)
		if i%2 == 0 {
			v = -1
		}
		pcm.Samples[2*i], pcm.Samples[2*i+1] = v, v
	}
	path := filepath.Join(t.TempDir(), "half.wav")
	if err := media.WriteWAV(path, pcm); err != nil {
		t.Fatal(err)
	}
	img, err := Thumbnail(context.Background(), path, ThumbSide)
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	if b.Dx() != ThumbSide || b.Dy() != ThumbSide*5/7 {
		t.Fatalf("waveform %v", b)
	}
	ink := func(x int) int {
		n := 0
		for y := 0; y < b.Dy(); y++ {
			if _, _, _, a := img.At(x, y).RGBA(); a > 0 {
				n++
			}
		}
		return n
	}
	if q, l := ink(b.Dx()/4), ink(b.Dx()*3/4); q > 1 || l < b.Dy()*9/10 {
		t.Errorf("ink in the silent quarter %d px, in the loud one %d of %d px", q, l, b.Dy())
	}
}
