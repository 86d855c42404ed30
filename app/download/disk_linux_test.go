package download

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// smallDisk mounts a tmpfs of the given size (mount's syntax, "4m") so a
// full disk is a real one, not a writer that pretends.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipping: a full disk needs a small tmpfs, and mounting one needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("skipping: cannot mount a tmpfs here (%v: %s)", err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// A download larger than the free space is refused before any byte moves.
func TestRefusedWhenDiskTooSmall(t *testing.T) {
	fx := newFixture(t)
	dst := smallDisk(t, "4m")
	c := fx.client(t, goodToken)
	s, err := c.List(context.Background(), testRepo, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Prepare(s, filepath.Join(dst, "MiniMax-H3"))
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "free") {
		t.Fatalf("got %v, want ErrNoSpace", err)
	}
	t.Log(err)
	if entries, _ := os.ReadDir(dst); len(entries) != 0 {
		t.Errorf("the refused download wrote %d entries", len(entries))
	}
}

// A disk that fills during the download stops it with one sentence; no
// unverified file reaches its final path, and once there is room again
// the next run resumes the partial files and finishes.
func TestDiskFillsDuringDownload(t *testing.T) {
	fx := newFixture(t)
	dst := smallDisk(t, "32m")
	c := fx.client(t, goodToken)
	s, err := c.List(context.Background(), testRepo, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(s, dst)
	if err != nil {
		t.Fatal(err)
	}
	// Someone else fills the disk after the check, leaving 2 MiB.
	filler := filepath.Join(dst, "filler")
	if err := os.WriteFile(filler, make([]byte, p.Free-2<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = c.Fetch(context.Background(), p, nil)
	if !errors.Is(err, ErrNoSpace) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v, want one ErrNoSpace sentence", err)
	}
	t.Log(err)
	src := tree(t, fx.src)
	for path, b := range tree(t, dst) {
		if want, ok := src[path]; ok && !bytes.Equal(b, want) {
			t.Errorf("%s is at its final path but differs from the source", path)
		}
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if _, err := fx.fetch(t, dst, ""); err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, tree(t, dst), src)
}
