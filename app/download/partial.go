package download

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"syscall"
)

// partial is a file being transferred: its .partial file, how much of it
// is there, and the running hash of those bytes.
type partial struct {
	f    File
	path string // the .partial file
	file *os.File
	have int64
	hash hash.Hash
	// etag is the ETag of the last small-file response, used to verify
	// the file when the listing gave no blob id.
	etag string
}

// openPartial opens (or creates) the .partial file for f and hashes the
// bytes a previous run left there. A partial longer than the listed file
// is left over from another revision and starts again.
func openPartial(path string, f File) (*partial, error) {
	file, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, writeError(f, path, err)
	}
	pt := &partial{f: f, path: path, file: file, hash: newHash(f)}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, writeError(f, path, err)
	}
	pt.have = st.Size()
	if pt.have > f.Size {
		if err := pt.restart(); err != nil {
			file.Close()
			return nil, err
		}
	}
	if _, err := io.Copy(pt.hash, io.NewSectionReader(file, 0, pt.have)); err != nil {
		file.Close()
		return nil, fmt.Errorf("download: cannot read %s to resume it: %w", path, err)
	}
	return pt, nil
}

// restart throws away what is there.
func (pt *partial) restart() error {
	if err := pt.file.Truncate(0); err != nil {
		return writeError(pt.f, pt.path, err)
	}
	pt.have = 0
	pt.hash.Reset()
	return nil
}

func (pt *partial) write(b []byte) error {
	n, err := pt.file.WriteAt(b, pt.have)
	pt.have += int64(n)
	pt.hash.Write(b[:n])
	if err != nil {
		return writeError(pt.f, pt.path, err)
	}
	return nil
}

// commit verifies the bytes and renames them to final; a file that fails
// is removed and refused in one sentence.
func (pt *partial) commit(final string) error {
	if err := pt.verify(); err != nil {
		return pt.discard(err)
	}
	if err := pt.file.Sync(); err != nil {
		pt.file.Close()
		return writeError(pt.f, pt.path, err)
	}
	if err := pt.file.Close(); err != nil {
		return writeError(pt.f, pt.path, err)
	}
	if err := os.Rename(pt.path, final); err != nil {
		return writeError(pt.f, final, err)
	}
	return nil
}

func (pt *partial) verify() error {
	f := pt.f
	if pt.have != f.Size {
		return &FileError{Path: f.Path, Msg: fmt.Sprintf("is truncated (the hub sent %d of its %d bytes) and was removed; run the download again", pt.have, f.Size)}
	}
	kind, want := "SHA-256", f.SHA256
	if want == "" {
		kind, want = "git blob id", f.BlobID
		if want == "" {
			want = pt.etag
		}
	}
	if want == "" {
		return nil // a hub that gives no digest at all: the size is all there is
	}
	if got := hex.EncodeToString(pt.hash.Sum(nil)); got != strings.ToLower(want) {
		return &FileError{Path: f.Path, Msg: fmt.Sprintf("is corrupt (its %s is %.12s…, the hub lists %.12s…) and was removed; run the download again", kind, got, want)}
	}
	return nil
}

// discard removes the partial file of a file that failed with err.
func (pt *partial) discard(err error) error {
	pt.file.Close()
	if rmErr := os.Remove(pt.path); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		return errors.Join(err, rmErr)
	}
	return err
}

// close releases the file if commit did not.
func (pt *partial) close() { pt.file.Close() }

// newHash is the digest the hub lists for f: SHA-256 for an LFS file, the
// git blob SHA-1 ("blob SIZE\0" then the bytes) for a small one.
func newHash(f File) hash.Hash {
	if f.SHA256 != "" {
		return sha256.New()
	}
	g := &gitBlob{Hash: sha1.New(), size: f.Size}
	g.Reset()
	return g
}

type gitBlob struct {
	hash.Hash
	size int64
}

func (g *gitBlob) Reset() {
	g.Hash.Reset()
	fmt.Fprintf(g.Hash, "blob %d\x00", g.size)
}

// writeError words a failed write; a full disk is ErrNoSpace, which stops
// the whole download and keeps the partial file for the next run.
func writeError(f File, path string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return stop(ErrNoSpace, "the disk filled while writing %s; what arrived is kept in %s, so free some space and run the download again to resume", f.Path, path)
	}
	return &FileError{Path: f.Path, Msg: fmt.Sprintf("cannot be written (%v); check the folder's permissions", err)}
}
