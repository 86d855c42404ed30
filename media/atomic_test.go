package media

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestSweepTemps(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	stale, err := createTemp(filepath.Join(dir, "clip.mp4"))
	if err != nil {
		t.Fatal(err)
	}
	stale.Close()
	staleDir := filepath.Join(dir, tempPrefix+"frames-1")
	if err := os.MkdirAll(filepath.Join(staleDir, "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	fresh, err := createTemp(filepath.Join(dir, "next.mp4"))
	if err != nil {
		t.Fatal(err)
	}
	fresh.Close()
	keep := writeFile(t, filepath.Join(dir, "clip.mp4"), []byte("finished"))
	for _, p := range []string{stale.Name(), staleDir, keep} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	n, err := SweepTemps(dir, time.Hour)
	if err != nil || n != 2 {
		t.Fatalf("swept %d (%v), want 2", n, err)
	}
	got := dirEntries(t, dir)
	sort.Strings(got)
	if len(got) != 2 || got[0] != filepath.Base(fresh.Name()) || got[1] != "clip.mp4" {
		t.Errorf("left %v, want the fresh temp and clip.mp4", got)
	}
	if !strings.HasPrefix(got[0], tempPrefix) {
		t.Errorf("temp name %q lacks the sweep prefix", got[0])
	}
}
