package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readBody(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// onlyFiles fails unless dir holds exactly names: no temporary file of a
// copy is left behind.
func onlyFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Fatalf("%s holds %v, want %v", dir, got, names)
	}
}

func TestSaveClipAsCopiesWholeClip(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	src := filepath.Join(dir, "clip.mp4")
	body := strings.Repeat("mp4 bytes ", 100_000)
	writeFile(t, src, body)
	dst := filepath.Join(out, "fox.mp4")
	writeFile(t, dst, "an older fox")
	if err := SaveClipAs(src, dst); err != nil {
		t.Fatal(err)
	}
	if readBody(t, dst) != body || readBody(t, src) != body {
		t.Fatal("the copy differs from the clip")
	}
	onlyFiles(t, out, "fox.mp4")
}

// A Save As onto the clip, by its name or through a link, is refused and
// leaves the clip whole.
func TestSaveClipAsRefusesTheSource(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "clip.mp4")
	writeFile(t, src, "the clip")
	link := filepath.Join(dir, "link.mp4")
	if err := os.Link(src, link); err != nil {
		t.Fatal(err)
	}
	for _, dst := range []string{src, filepath.Join(dir, ".", "clip.mp4"), link} {
		err := SaveClipAs(src, dst)
		if err == nil {
			t.Fatalf("saving over %s was allowed", dst)
		}
		if got, want := Advice(err), "The clip cannot replace itself; choose another name or folder"; got != want {
			t.Errorf("advice %q, want %q", got, want)
		}
	}
	if readBody(t, src) != "the clip" {
		t.Fatal("the clip was changed")
	}
	onlyFiles(t, dir, "clip.mp4", "link.mp4")
}

// A copy that cannot be made leaves the destination as it was, with no
// part of the clip beside it, and says why in one sentence.
func TestSaveClipAsFailureLeavesNoPartialFile(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	dst := filepath.Join(out, "fox.mp4")
	writeFile(t, dst, "an older fox")
	// A folder opens but cannot be read as a file: the copy fails after
	// the temporary file exists.
	err := SaveClipAs(dir, dst)
	if err == nil {
		t.Fatal("copying a folder succeeded")
	}
	if readBody(t, dst) != "an older fox" {
		t.Fatal("the destination was changed by a failed copy")
	}
	onlyFiles(t, out, "fox.mp4")
	if got := Advice(err); !strings.HasPrefix(got, "Cannot save fox.mp4;") {
		t.Errorf("advice %q", got)
	}
	err = SaveClipAs(dst, filepath.Join(out, "missing", "fox.mp4"))
	if got, want := Advice(err), "Cannot save fox.mp4: the folder missing does not exist; choose another"; got != want {
		t.Errorf("advice %q, want %q", got, want)
	}
	err = SaveClipAs(filepath.Join(dir, "gone.mp4"), filepath.Join(out, "x.mp4"))
	if got := Advice(err); !strings.HasPrefix(got, "Cannot find gone.mp4") {
		t.Errorf("advice for a missing clip %q", got)
	}
}

func TestClipSavePath(t *testing.T) {
	for in, want := range map[string]string{"/a/fox": "/a/fox.mp4", "/a/fox.mp4": "/a/fox.mp4", "/a/fox.MOV": "/a/fox.MOV"} {
		if got := ClipSavePath(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
