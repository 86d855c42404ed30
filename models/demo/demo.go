// Package demo is the built-in demo model: a small MiniMax-H3 snapshot in
// the official layout (model_index.json, FL2VA/ and Ref2VA/ partitions,
// plus H3 Studio's h3studio.json), embedded in the binary so that a render
// with no model folder shows something without a download.
//
// The engine reads snapshots from disk (it maps shards), so Dir extracts
// the embedded files into the cache folder once per version.
package demo

import (
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
)

//go:embed snapshot
var embedded embed.FS

// snapshotRoot is the embedded tree's top folder.
const snapshotRoot = "snapshot"

// versionHexLen is how much of the content digest names a version's
// folder: 48 bits keep versions apart and the path short.
const versionHexLen = 12

// embeddedDigest is computed once: hashing 17 MB costs tens of
// milliseconds and the embedded files never change in a process.
var embeddedDigest = sync.OnceValues(func() (string, error) { return Digest(Snapshot()) })

// Snapshot is the embedded snapshot as a file system rooted at the
// snapshot's top (model_index.json, FL2VA/, Ref2VA/, h3studio.json).
func Snapshot() fs.FS {
	sub, err := fs.Sub(embedded, snapshotRoot)
	if err != nil {
		panic("demo: the embedded snapshot has no root: " + err.Error()) // a build without the folder
	}
	return sub
}

// Dir is the demo model's snapshot folder under cacheRoot, extracted on
// first use: cacheRoot/demo-<first 12 hex digits of Digest>.
func Dir(cacheRoot string) (string, error) {
	d, err := embeddedDigest()
	if err != nil {
		return "", err
	}
	return Extract(Snapshot(), d, cacheRoot)
}

// Digest is the SHA-256 over every regular file of fsys in lexical order,
// each as its path, its length and its bytes (so moving bytes between
// files or renaming one changes it).
func Digest(fsys fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(st.Size()))
		h.Write([]byte(p))
		h.Write([]byte{0})
		h.Write(n[:])
		_, err = io.Copy(h, f)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("demo: hash the snapshot: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Extract writes fsys into cacheRoot/demo-<digest prefix> unless that
// folder exists, and returns it. The files go into a temporary sibling
// renamed into place when complete, so the folder is never seen half
// written; a process that loses a race to another keeps the winner's
// folder (same digest, same bytes). Another version's folder is left
// alone: a second binary of the older version may still use it.
func Extract(fsys fs.FS, digest, cacheRoot string) (string, error) {
	if len(digest) < versionHexLen {
		return "", fmt.Errorf("demo: digest %q is shorter than %d hex digits", digest, versionHexLen)
	}
	name := "demo-" + digest[:versionHexLen]
	dir := filepath.Join(cacheRoot, name)
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return dir, nil
	}
	if err := os.MkdirAll(cacheRoot, 0o755); err != nil {
		return "", fmt.Errorf("demo: extract the demo model: %w", err)
	}
	tmp, err := os.MkdirTemp(cacheRoot, "."+name+"-*")
	if err != nil {
		return "", fmt.Errorf("demo: extract the demo model: %w", err)
	}
	if err := copyTree(fsys, tmp); err != nil {
		return "", errors.Join(fmt.Errorf("demo: extract the demo model into %s: %w", cacheRoot, err), os.RemoveAll(tmp))
	}
	if err := os.Rename(tmp, dir); err != nil {
		// A racing process renamed its copy first: that folder is whole.
		if st, serr := os.Stat(dir); serr == nil && st.IsDir() {
			return dir, os.RemoveAll(tmp)
		}
		return "", errors.Join(fmt.Errorf("demo: extract the demo model: %w", err), os.RemoveAll(tmp))
	}
	return dir, nil
}

// copyTree copies every folder and regular file of fsys under dst, then
// fills the shared partitions (fillShared).
func copyTree(fsys fs.FS, dst string) error {
	if err := copyAll(fsys, dst); err != nil {
		return err
	}
	return fillShared(fsys, dst)
}

// fillShared completes a partition folder that holds nothing but its
// model_index.json from the partition with the most files. The demo's two
// partitions share every weight (one DiT trained on all tasks), and the
// repository keeps them once: it travels whole to the GPU machine the
// model trains on, under a size limit, and the engine reads the official
// layout, where each partition carries its own copy.
func fillShared(fsys fs.FS, dst string) error {
	tops, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return err
	}
	files := map[string][]string{} // partition -> its files, relative to it
	var full string
	for _, e := range tops {
		if !e.IsDir() {
			continue
		}
		sub, err := fs.Sub(fsys, e.Name())
		if err != nil {
			return err
		}
		err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				files[e.Name()] = append(files[e.Name()], p)
			}
			return err
		})
		if err != nil {
			return err
		}
		if len(files[e.Name()]) > len(files[full]) {
			full = e.Name()
		}
	}
	for part, fs1 := range files {
		if part == full || len(fs1) != 1 || fs1[0] != partitionIndex {
			continue
		}
		for _, p := range files[full] {
			if p == partitionIndex {
				continue
			}
			out := filepath.Join(dst, part, filepath.FromSlash(p))
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				return err
			}
			if err := copyFile(fsys, path.Join(full, p), out); err != nil {
				return err
			}
		}
	}
	return nil
}

// partitionIndex is the one file a shared partition keeps of its own.
const partitionIndex = "model_index.json"

func copyAll(fsys fs.FS, dst string) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		out := filepath.Join(dst, filepath.FromSlash(p))
		switch {
		case d.IsDir():
			return os.MkdirAll(out, 0o755)
		case d.Type().IsRegular():
			return copyFile(fsys, p, out)
		}
		return fmt.Errorf("%s is not a regular file", path.Clean(p))
	})
}

func copyFile(fsys fs.FS, src, dst string) error {
	in, err := fsys.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		return errors.Join(err, out.Close())
	}
	return out.Close()
}
