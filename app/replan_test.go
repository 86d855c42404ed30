package app

import (
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"h3studio/engine"
	"h3studio/engine/tokenizer/tokref"
)

// qwen3Snapshot is the tiny model with every tokenizer.json replaced by the
// real Qwen3 one (11 MB), so planning pays what it pays on the release;
// it skips when the reference packages cannot be installed (offline).
func qwen3Snapshot(b testing.TB) string {
	b.Helper()
	ref, err := tokref.Install()
	if err != nil {
		b.Skipf("the real Qwen3 tokenizer is not available: %v", err)
	}
	qwen, err := os.ReadFile(tokref.Qwen3JSON(ref))
	if err != nil {
		b.Fatal(err)
	}
	dir, err := engine.TinyModelDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "tokenizer.json" {
			return err
		}
		n++
		return os.WriteFile(path, qwen, 0o644)
	})
	if err != nil || n == 0 {
		b.Fatalf("replace the tiny tokenizers: %d replaced, %v", n, err)
	}
	return dir
}

// testClip writes a 2 s 24 fps clip with a sine soundtrack.
func testClip(b testing.TB, path, size string) {
	b.Helper()
	out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-f", "lavfi", "-i", "testsrc=size="+size+":rate=24",
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=32000", "-t", "2", "-pix_fmt", "yuv420p", "-shortest", path).CombinedOutput()
	if err != nil {
		b.Fatalf("ffmpeg: %v: %s", err, out)
	}
}

// BenchmarkReplan is the window's live re-plan: the same request with an
// edited prompt, two reference clips and the real Qwen3 tokenizer, through
// Prepare (what ui.PlanWith calls). It reports the median re-plan.
func BenchmarkReplan(b *testing.B) {
	for _, bin := range []string{"ffmpeg", "ffprobe"} {
		if _, err := exec.LookPath(bin); err != nil {
			b.Skipf("%s not installed", bin)
		}
	}
	dir := b.TempDir()
	clips := []string{filepath.Join(dir, "a.mp4"), filepath.Join(dir, "b.mp4")}
	testClip(b, clips[0], "320x240")
	testClip(b, clips[1], "240x320")
	rd := &Renderer{CacheDir: b.TempDir(), DefaultModel: TinyModel, Threads: 1, Logger: slog.New(slog.DiscardHandler)}
	defer rd.Close()
	r := Request{Model: qwen3Snapshot(b), Machine: "m5-max-128", Seconds: 2, Output: filepath.Join(dir, "out.mp4"),
		References: []Reference{{Kind: RefVideoAudio, Path: clips[0]}, {Kind: RefVideo, Path: clips[1]}}}
	// The first plan opens the engine, as the window's first plan does.
	r.Prompt = "a red fox runs through snow"
	if _, err := rd.Prepare(b.Context(), r); err != nil {
		b.Fatal(err)
	}
	var took []time.Duration
	for i := 0; b.Loop(); i++ {
		r.Prompt = fmt.Sprintf("a red fox runs through snow, take %d", i)
		t0 := time.Now()
		if _, err := rd.Prepare(b.Context(), r); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(t0))
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
}
