package download

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ManifestName is the file in the download folder that records the digest
// each file was verified against. A later run skips a file only when the
// hub still lists that digest: a new revision can change a shard's bytes
// and keep its size, and hashing hundreds of GB on every run to find out
// is not an option.
const ManifestName = ".h3studio-download.json"

type manifest struct {
	path string
	mu   sync.Mutex
	// Files maps a file's path to the digest it was verified against.
	Files map[string]string `json:"files"`
}

func loadManifest(dir string) (*manifest, error) {
	m := &manifest{path: filepath.Join(dir, ManifestName), Files: map[string]string{}}
	raw, err := os.ReadFile(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, fmt.Errorf("download: cannot read %s: %w", m.path, err)
	}
	if err := json.Unmarshal(raw, m); err != nil || m.Files == nil {
		// A damaged record costs only a re-verification of what is there.
		m.Files = map[string]string{}
	}
	return m, nil
}

// What the manifest knows of a file at its final path.
type recordState int

const (
	recordMissing recordState = iota // never recorded: hash it to know
	recordMatches                    // verified against the hub's digest
	recordStale                      // verified against a digest the hub no longer lists
)

func (m *manifest) state(f File) recordState {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch d, ok := m.Files[f.Path]; {
	case !ok:
		return recordMissing
	case d == f.digest():
		return recordMatches
	default:
		return recordStale
	}
}

// record notes f as verified and saves the manifest, writing a new file
// and renaming it so a crash leaves the previous record whole.
func (m *manifest) record(f File) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Files[f.Path] = f.digest()
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("download: record %s: %w", f.Path, err)
	}
	tmp := m.path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o644); err != nil {
		return writeError(File{Path: ManifestName}, tmp, err)
	}
	if err := os.Rename(tmp, m.path); err != nil {
		return writeError(File{Path: ManifestName}, m.path, err)
	}
	return nil
}

// digest is what the hub lists for f: its LFS SHA-256 or its git blob id.
func (f File) digest() string {
	if f.SHA256 != "" {
		return f.SHA256
	}
	return strings.ToLower(f.BlobID)
}

// matches hashes the file at path (of f's size, already checked) against
// the hub's digest for f.
func matches(path string, f File) (bool, error) {
	file, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("download: cannot read %s to verify it: %w", path, err)
	}
	defer file.Close()
	h := newHash(f)
	if _, err := io.Copy(h, file); err != nil {
		return false, fmt.Errorf("download: cannot read %s to verify it: %w", path, err)
	}
	want := f.digest()
	return want == "" || fmt.Sprintf("%x", h.Sum(nil)) == want, nil
}
