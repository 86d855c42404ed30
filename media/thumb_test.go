package media

import (
	"context"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestThumbnail(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	still := encodeTo(t, filepath.Join(dir, "q.png"), func(f *os.File) error { return png.Encode(f, quadrants(400, 200)) })
	video := clip(t, dir, "v.mp4", 320, 240, 24, 3, 22050)
	audio := filepath.Join(dir, "a.wav")
	ffmpegGen(t, "-f", "lavfi", "-i", "sine", "-t", "0.5", audio)

	img, err := tools.Thumbnail(testCtx(t), still, 128)
	if err != nil || img.Bounds().Dx() != 128 || img.Bounds().Dy() != 64 {
		t.Fatalf("still thumbnail %v %v, want 128x64", img, err)
	}
	checkQuadrants(t, "thumbnail", img, 8)
	img, err = tools.Thumbnail(testCtx(t), video, 128)
	if err != nil || img.Bounds().Dx() != 128 || img.Bounds().Dy() != 96 {
		t.Fatalf("video thumbnail %v %v, want 128x96", img.Bounds(), err)
	}
	if _, err := tools.Thumbnail(testCtx(t), audio, 128); !errors.Is(err, ErrNoPicture) {
		t.Errorf("audio thumbnail: %v, want ErrNoPicture", err)
	}
}

// TestDecodeCancelAndTimeout: a cancelled context or an expired time limit
// kills the FFmpeg child, and the reader reports which.
func TestDecodeCancelAndTimeout(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	src := clip(t, dir, "v.mp4", 640, 360, 24, 4, 0)
	ctx, cancel := context.WithCancel(testCtx(t))
	r, err := tools.OpenVideo(ctx, src, VideoOptions{Width: 640, Height: 360})
	if err != nil {
		t.Fatal(err)
	}
	var f Frame
	if err := r.Next(&f); err != nil {
		t.Fatal(err)
	}
	cancel()
	for err == nil {
		err = r.Next(&f)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v, want context.Canceled", err)
	}
	r.Close()

	slow := &Tools{Timeout: 50 * time.Millisecond}
	_, err = slow.DecodeVideo(testCtx(t), src, VideoOptions{Width: 640, Height: 360}, func(int, Frame) error {
		time.Sleep(20 * time.Millisecond) // a slow consumer keeps FFmpeg alive past its limit
		return nil
	})
	if !errors.Is(err, ErrTimeout) {
		t.Errorf("past the time limit: %v, want ErrTimeout", err)
	}
}
