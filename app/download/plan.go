package download

import (
	"fmt"
	"os"
	"path/filepath"
)

// PartialSuffix names the file a transfer writes into until it is
// verified; it stays on disk between runs so the next one resumes it.
const PartialSuffix = ".partial"

// Plan is a snapshot measured against what the folder already holds.
type Plan struct {
	*Snapshot
	Dir string
	// Complete lists files already at their final path with their listed
	// size and recorded in the manifest as verified against the digest the
	// hub lists now; they are skipped.
	Complete map[string]bool
	// Unverified lists files at their final path with their listed size
	// that the manifest has no record of (fetched by another tool): Fetch
	// hashes each, keeps it if it matches and fetches it again if not.
	// Need assumes they match. A file recorded against another digest
	// than the hub's is fetched again without hashing.
	Unverified map[string]bool
	// Resumable is the bytes already in .partial files.
	Resumable int64
	// Need is the bytes still to transfer.
	Need int64
	// Free is the space left on the folder's disk (-1: unknown).
	Free int64

	manifest *manifest
}

// Prepare measures s against dir and refuses, with ErrNoSpace, a download
// the disk cannot hold. dir need not exist yet.
func Prepare(s *Snapshot, dir string) (*Plan, error) {
	m, err := loadManifest(dir)
	if err != nil {
		return nil, err
	}
	p := &Plan{Snapshot: s, Dir: dir, Complete: map[string]bool{}, Unverified: map[string]bool{}, manifest: m}
	for _, f := range s.Files {
		final := p.finalPath(f)
		if st, err := os.Stat(final); err == nil && st.Mode().IsRegular() && st.Size() == f.Size {
			switch m.state(f) {
			case recordMatches:
				p.Complete[f.Path] = true
				continue
			case recordMissing:
				p.Unverified[f.Path] = true
				continue
			}
			// recordStale: the hub has changed the file since; fetch it.
		}
		var have int64
		if st, err := os.Stat(final + PartialSuffix); err == nil && st.Size() <= f.Size {
			have = st.Size()
		}
		p.Resumable += have
		p.Need += f.Size - have
	}
	free, err := freeSpace(existingParent(dir))
	if err != nil {
		return nil, fmt.Errorf("download: cannot tell the free space of %s: %w", dir, err)
	}
	p.Free = free
	if free >= 0 && p.Need > free {
		return nil, stop(ErrNoSpace, "%s needs %s more but its disk has %s free; free some space or choose another folder", dir, Bytes(p.Need), Bytes(free))
	}
	return p, nil
}

func (p *Plan) finalPath(f File) string {
	return filepath.Join(p.Dir, filepath.FromSlash(f.Path))
}

// existingParent is dir or its nearest ancestor that exists.
func existingParent(dir string) string {
	d := filepath.Clean(dir)
	for {
		if _, err := os.Stat(d); err == nil {
			return d
		}
		up := filepath.Dir(d)
		if up == d {
			return d
		}
		d = up
	}
}

// Bytes writes a byte count for people: 1.5 GB, 820.0 MB, 12 B, in
// powers of 1024 like the plan panel's GB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, suffix := float64(n)/unit, "KB"
	for _, s := range []string{"MB", "GB", "TB"} {
		if v < unit {
			break
		}
		v, suffix = v/unit, s
	}
	return fmt.Sprintf("%.1f %s", v, suffix)
}
