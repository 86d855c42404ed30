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
	// size; they are skipped. A file only gets there verified, so a size
	// match is trusted rather than hashing hundreds of GB on every run.
	Complete map[string]bool
	// Resumable is the bytes already in .partial files.
	Resumable int64
	// Need is the bytes still to transfer.
	Need int64
	// Free is the space left on the folder's disk (-1: unknown).
	Free int64
}

// Prepare measures s against dir and refuses, with ErrNoSpace, a download
// the disk cannot hold. dir need not exist yet.
func Prepare(s *Snapshot, dir string) (*Plan, error) {
	p := &Plan{Snapshot: s, Dir: dir, Complete: map[string]bool{}}
	for _, f := range s.Files {
		final := p.finalPath(f)
		if st, err := os.Stat(final); err == nil && st.Mode().IsRegular() && st.Size() == f.Size {
			p.Complete[f.Path] = true
			continue
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
