package download

import (
	"os"
	"path/filepath"
	"testing"

	"h3studio/app/download/hubtest"
)

// flipByte changes one byte of the file at path, keeping its size.
func flipByte(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A file the hub changed without changing its size (a new revision of a
// shard) is fetched again: the manifest says which digest the copy in the
// folder was verified against.
func TestChangedFileFetchedAgain(t *testing.T) {
	fx := newFixture(t)
	dst := t.TempDir()
	if _, err := fx.fetch(t, dst, ""); err != nil {
		t.Fatal(err)
	}
	flipByte(t, filepath.Join(fx.src, bigFile))
	hub, err := hubtest.New(testRepo, fx.src)
	if err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
	hub.SetToken(goodToken)
	r, err := (&fixture{src: fx.src, hub: hub}).fetch(t, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, tree(t, dst), tree(t, fx.src))
	if r.Fetched != 1 || r.Moved != int64(sourceFiles[bigFile]) || r.Skipped != len(sourceFiles)-1 {
		t.Errorf("after the hub changed %s: %+v, want it alone fetched", bigFile, r)
	}
}

// Files already in the folder without a manifest (fetched by another
// tool) are hashed and kept when they match; one that does not is fetched
// again. The next run trusts the manifest and hashes nothing.
func TestKeepsFilesFetchedElsewhere(t *testing.T) {
	fx := newFixture(t)
	dst := t.TempDir()
	for p, b := range tree(t, fx.src) {
		full := filepath.Join(dst, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const stale = "FL2VA/transformer/model-00002-of-00002.safetensors"
	flipByte(t, filepath.Join(dst, stale))
	r, err := fx.fetch(t, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, tree(t, dst), tree(t, fx.src))
	if r.Kept != len(sourceFiles)-1 || r.Fetched != 1 || r.Moved != int64(sourceFiles[stale]) {
		t.Errorf("first run: %+v, want %d kept and %s fetched", r, len(sourceFiles)-1, stale)
	}
	r, err = fx.fetch(t, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Skipped != len(sourceFiles) || r.Kept != 0 || r.Moved != 0 {
		t.Errorf("second run: %+v, want everything skipped", r)
	}
}

// A damaged manifest costs a re-verification of the folder, not a
// refusal and not a second download.
func TestDamagedManifest(t *testing.T) {
	fx := newFixture(t)
	dst := t.TempDir()
	if _, err := fx.fetch(t, dst, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, ManifestName), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := fx.fetch(t, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Kept != len(sourceFiles) || r.Moved != 0 {
		t.Errorf("after a damaged manifest: %+v, want every file verified and kept", r)
	}
	assertSameTree(t, tree(t, dst), tree(t, fx.src))
}
