package demo

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
)

func smallTree() fstest.MapFS {
	return fstest.MapFS{
		"model_index.json":        {Data: []byte(`{"_class_name":"x"}`)},
		"h3studio.json":           {Data: []byte(`{"name":"small"}`)},
		"FL2VA/transformer/a.st":  {Data: []byte("weights of a")},
		"Ref2VA/transformer/a.st": {Data: []byte("weights of a")},
	}
}

func mustDigest(t *testing.T, fsys fs.FS) string {
	t.Helper()
	d, err := Digest(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// entries lists cacheRoot's names.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestExtractWritesEveryFileOnce(t *testing.T) {
	tree, root := smallTree(), t.TempDir()
	d := mustDigest(t, tree)
	dir, err := Extract(tree, d, root)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "demo-"+d[:12]); dir != want {
		t.Errorf("dir %s, want %s", dir, want)
	}
	for name, f := range tree {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != string(f.Data) {
			t.Errorf("%s: %q, %v; want %q", name, got, err, f.Data)
		}
	}
	// A second call finds the folder and writes nothing: a file changed
	// in the cache stays changed.
	marker := filepath.Join(dir, "h3studio.json")
	if err := os.WriteFile(marker, []byte("edited"), 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := Extract(tree, d, root)
	if err != nil || again != dir {
		t.Fatalf("second extract: %s, %v", again, err)
	}
	if got, _ := os.ReadFile(marker); string(got) != "edited" {
		t.Errorf("second extract rewrote the folder (%q)", got)
	}
	if names := entries(t, root); len(names) != 1 {
		t.Errorf("cache holds %v, want only the demo folder (no temporary left)", names)
	}
}

func TestDigestFollowsContentAndNames(t *testing.T) {
	base := mustDigest(t, smallTree())
	changed := smallTree()
	changed["h3studio.json"] = &fstest.MapFile{Data: []byte(`{"name":"other"}`)}
	renamed := smallTree()
	renamed["h3studio2.json"] = renamed["h3studio.json"]
	delete(renamed, "h3studio.json")
	for what, tree := range map[string]fstest.MapFS{"content": changed, "name": renamed} {
		if mustDigest(t, tree) == base {
			t.Errorf("a changed %s leaves the digest %s", what, base)
		}
	}
	if mustDigest(t, smallTree()) != base {
		t.Error("the digest of the same tree differs between calls")
	}
}

func TestExtractNewVersionKeepsOld(t *testing.T) {
	root := t.TempDir()
	old := smallTree()
	oldDir, err := Extract(old, mustDigest(t, old), root)
	if err != nil {
		t.Fatal(err)
	}
	next := smallTree()
	next["h3studio.json"] = &fstest.MapFile{Data: []byte(`{"name":"v2"}`)}
	newDir, err := Extract(next, mustDigest(t, next), root)
	if err != nil {
		t.Fatal(err)
	}
	if newDir == oldDir {
		t.Fatalf("a new version extracted into the old folder %s", oldDir)
	}
	got, _ := os.ReadFile(filepath.Join(newDir, "h3studio.json"))
	if string(got) != `{"name":"v2"}` {
		t.Errorf("new folder's h3studio.json is %q", got)
	}
	if _, err := os.Stat(filepath.Join(oldDir, "model_index.json")); err != nil {
		t.Errorf("the old version's folder went away: %v", err)
	}
}

// failingFS fails to open one file, as a disk that fills up mid-copy.
type failingFS struct {
	fs.FS
	bad string
}

func (f failingFS) Open(name string) (fs.File, error) {
	if name == f.bad {
		return nil, errors.New("no space left on device")
	}
	return f.FS.Open(name)
}

func TestExtractFailureLeavesNoFolder(t *testing.T) {
	root := t.TempDir()
	tree := smallTree()
	d := mustDigest(t, tree)
	_, err := Extract(failingFS{tree, "Ref2VA/transformer/a.st"}, d, root)
	if err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("error %v, want the copy's failure", err)
	}
	if names := entries(t, root); len(names) != 0 {
		t.Errorf("a failed extract left %v", names)
	}
	// The next start extracts it whole.
	dir, err := Extract(tree, d, root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "Ref2VA/transformer/a.st")); err != nil {
		t.Error(err)
	}
}

func TestExtractRacing(t *testing.T) {
	root, tree := t.TempDir(), smallTree()
	d := mustDigest(t, tree)
	const n = 8
	dirs, errs := make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], errs[i] = Extract(tree, d, root)
		}()
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || dirs[i] != dirs[0] {
			t.Errorf("extract %d: %s, %v; want %s", i, dirs[i], errs[i], dirs[0])
		}
	}
	if names := entries(t, root); len(names) != 1 {
		t.Errorf("cache holds %v after the race, want one folder", names)
	}
}

// The embedded snapshot is a MiniMax-H3 tree with H3 Studio's file.
func TestEmbeddedSnapshotLayout(t *testing.T) {
	for _, p := range []string{"model_index.json", "h3studio.json", "FL2VA/model_index.json", "Ref2VA/model_index.json"} {
		if _, err := fs.Stat(Snapshot(), p); err != nil {
			t.Errorf("embedded snapshot: %v", err)
		}
	}
}

// repositoryBudget is the ceiling on the demo snapshot's bytes in
// the repository (issue 15: 40 MB); grow_dit.py's DGROW=7 comes to 38 MB.
const repositoryBudget = 40_000_000

// The embedded snapshot, as the repository stores it, stays within its
// budget: a deeper DiT or a wider VAE that passes it must not ship.
func TestEmbeddedSnapshotWithinBudget(t *testing.T) {
	var total int64
	err := fs.WalkDir(Snapshot(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if total > repositoryBudget {
		t.Errorf("the demo snapshot holds %d bytes, over the %d the repository allows it", total, int64(repositoryBudget))
	}
}

// A partition holding only its model_index.json is filled from the full
// one, as the repository stores the demo's two partitions.
func TestExtractFillsSharedPartition(t *testing.T) {
	tree := fstest.MapFS{
		"model_index.json":            {Data: []byte(`{}`)},
		"FL2VA/model_index.json":      {Data: []byte(`{"partition":"fl2va"}`)},
		"FL2VA/transformer/a.st":      {Data: []byte("weights of a")},
		"FL2VA/video_vae/source/b.st": {Data: []byte("weights of b")},
		"Ref2VA/model_index.json":     {Data: []byte(`{"partition":"ref2va"}`)},
	}
	dir, err := Extract(tree, mustDigest(t, tree), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Ref2VA/model_index.json":      `{"partition":"ref2va"}`,
		"Ref2VA/transformer/a.st":      "weights of a",
		"Ref2VA/video_vae/source/b.st": "weights of b",
		"FL2VA/model_index.json":       `{"partition":"fl2va"}`,
	}
	for name, w := range want {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil || string(got) != w {
			t.Errorf("%s: %q, %v; want %q", name, got, err, w)
		}
	}
}
