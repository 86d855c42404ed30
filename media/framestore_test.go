package media

import (
	"bufio"
	"bytes"
	"image"
	"image/jpeg"
	"math/rand"
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// codedFrame paints frame i so it can be recognised after lossy coding:
// the left half's level is i%8, the right half's i/8, in steps of 25.
func codedFrame(w, h, i int) Frame {
	f := NewFrame(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := byte(20 + 25*(i%8))
			if x >= w/2 {
				v = byte(20 + 25*(i/8))
			}
			o := (y*w + x) * 3
			f.Pix[o], f.Pix[o+1], f.Pix[o+2] = v, v, v
		}
	}
	return f
}

// frameIndex reads codedFrame's index back from a decoded picture.
func frameIndex(img image.Image) int {
	b := img.Bounds()
	level := func(x int) int {
		r, _, _, _ := img.At(x, b.Min.Y+b.Dy()/2).RGBA()
		return (int(r>>8) - 20 + 12) / 25
	}
	return level(b.Min.X+b.Dx()/4) + 8*level(b.Min.X+3*b.Dx()/4)
}

// storeClip encodes n coded frames and loads them back into a store.
func storeClip(t *testing.T, w, h, n int) (*FrameStore, string) {
	t.Helper()
	tools := testTools(t)
	dst := filepath.Join(t.TempDir(), "clip.mp4")
	wr, err := tools.CreateMP4(testCtx(t), dst, EncodeOptions{Width: w, Height: h, Preset: "veryfast"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := wr.WriteFrame(codedFrame(w, h, i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := wr.Close(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s, err := tools.LoadFrames(testCtx(t), dst, FrameStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d frames of %dx%d in %v: %.1f MB compressed", s.Len(), w, h, time.Since(start), float64(s.Bytes())/1e6)
	return s, dst
}

// checkRandomAccess reads every frame in random order, by index and by
// time, and returns the slowest single access.
func checkRandomAccess(t *testing.T, s *FrameStore, n int) time.Duration {
	t.Helper()
	if s.Len() != n {
		t.Fatalf("store has %d frames, want %d", s.Len(), n)
	}
	var times []time.Duration
	for _, i := range rand.New(rand.NewSource(1)).Perm(n) {
		start := time.Now()
		img, err := s.Frame(i)
		times = append(times, time.Since(start))
		if err != nil {
			t.Fatal(err)
		}
		if got := frameIndex(img); got != i {
			t.Fatalf("frame %d holds the picture of frame %d", i, got)
		}
		// Midway through frame i's display time.
		at := time.Duration((float64(i) + 0.5) / FPS * float64(time.Second))
		if _, idx, err := s.At(at); err != nil || idx != i {
			t.Fatalf("At(%v) = frame %d (%v), want %d", at, idx, err, i)
		}
		if idx := s.IndexAt(time.Duration(float64(i) / FPS * float64(time.Second))); idx != i {
			t.Fatalf("IndexAt(start of frame %d) = %d", i, idx)
		}
	}
	sort.Slice(times, func(a, b int) bool { return times[a] < times[b] })
	t.Logf("random access: median %v, slowest %v", times[len(times)/2], times[len(times)-1])
	return times[len(times)/2]
}

func TestFrameStoreRandomAccess(t *testing.T) {
	const w, h, n = 256, 448, 53
	s, path := storeClip(t, w, h, n)
	if gw, gh := s.Size(); gw != w || gh != h || s.FPS() != FPS {
		t.Errorf("store %dx%d at %g fps", gw, gh, s.FPS())
	}
	if median := checkRandomAccess(t, s, n); median > 50*time.Millisecond {
		t.Errorf("median random access %v, want milliseconds", median)
	}
	if _, err := s.Frame(n); err == nil {
		t.Error("frame past the end accepted")
	}
	if s.IndexAt(-time.Second) != 0 || s.IndexAt(time.Hour) != n-1 {
		t.Error("times outside the clip must clamp to its ends")
	}
	bounded, err := testTools(t).LoadFrames(testCtx(t), path, FrameStoreOptions{Width: 64, Height: 112, MaxFrames: 10})
	if err != nil || bounded.Len() != 10 {
		t.Fatalf("bounded load: %v frames (%v), want 10", bounded, err)
	}
	if img, err := bounded.Frame(9); err != nil || img.Bounds().Dx() != 64 || img.Bounds().Dy() != 112 || frameIndex(img) != 9 {
		t.Errorf("scaled frame 9: %v %v", img, err)
	}
}

func TestFrameStoreAppend(t *testing.T) {
	s := NewFrameStore(64, 32, FPS)
	for i := 0; i < 20; i++ {
		if err := s.Append(codedFrame(64, 32, i)); err != nil {
			t.Fatal(err)
		}
	}
	checkRandomAccess(t, s, 20)
	if err := s.Append(NewFrame(8, 8)); err == nil {
		t.Error("wrong-size frame accepted")
	}
}

func TestSplitJPEGs(t *testing.T) {
	var stream bytes.Buffer
	var sizes []int
	for i := 0; i < 3; i++ {
		before := stream.Len()
		if err := jpeg.Encode(&stream, codedFrame(40, 24, i*9).Image(), nil); err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, stream.Len()-before)
	}
	var got []int
	err := splitJPEGs(bufio.NewReader(bytes.NewReader(stream.Bytes())), func(b []byte) { got = append(got, len(b)) })
	if err != nil || len(got) != 3 || got[0] != sizes[0] || got[1] != sizes[1] || got[2] != sizes[2] {
		t.Fatalf("split %v (%v), want %v", got, err, sizes)
	}
	cut := stream.Bytes()[:stream.Len()-10]
	if err := splitJPEGs(bufio.NewReader(bytes.NewReader(cut)), func([]byte) {}); err == nil {
		t.Error("truncated stream accepted")
	}
}
