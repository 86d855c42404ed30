package media

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// tempPrefix starts the name of every temporary output, so a sweep after a
// crash can find them (".name.h3tmp-123").
const tempPrefix = ".h3tmp-"

// createTemp makes an empty temporary file next to dst, on the same file
// system so that the final rename is atomic.
func createTemp(dst string) (*os.File, error) {
	dir, base := filepath.Split(dst)
	if dir == "" {
		dir = "."
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("media: write %s: folder %s does not exist", dst, dir)
	}
	f, err := os.CreateTemp(dir, tempPrefix+strings.TrimPrefix(base, ".")+"-*")
	if err != nil {
		return nil, fmt.Errorf("media: write %s: %w", dst, err)
	}
	return f, nil
}

// commitTemp makes a finished temporary file durable and moves it to dst.
// On any error the temporary file is removed.
func commitTemp(tmp, dst string) error {
	err := syncFile(tmp)
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("media: write %s: %w", dst, err)
	}
	// The rename itself is durable only once the folder is synced;
	// failing that is not worth failing a finished render for.
	_ = syncFile(filepath.Dir(dst))
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeAtomic writes dst through a temporary file in its folder.
func writeAtomic(dst string, write func(f *os.File) error) error {
	f, err := createTemp(dst)
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("media: write %s: %w", dst, err)
	}
	return commitTemp(tmp, dst)
}

// SweepTemps removes the temporary outputs (files and PNG folders) that a
// crash or power loss left in dir, if they are older than olderThan, so
// that a running encode's files are never touched. It returns how many it
// removed.
func SweepTemps(dir string, olderThan time.Duration) (int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("media: sweep %s: %w", dir, err)
	}
	removed := 0
	var errs []error
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		info, err := e.Info()
		if err != nil || time.Since(info.ModTime()) < olderThan {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("media: sweep %s: %w", dir, err)
	}
	return removed, nil
}
