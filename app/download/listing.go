package download

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// File is one file of a repository snapshot as the hub lists it.
type File struct {
	// Path is slash-separated and relative to the repository root.
	Path string
	Size int64
	// BlobID is the git blob SHA-1, which the hub also serves as the ETag
	// of a small file.
	BlobID string
	// SHA256 is the LFS object id of a large file; empty for a small one.
	SHA256 string
}

// Snapshot is the file list of one repository at one commit.
type Snapshot struct {
	Repo     string
	Revision string // as asked for: a branch, tag or commit
	Commit   string // the commit the revision resolved to; files are fetched from it
	Files    []File
}

// Size is the total size of the snapshot's files.
func (s *Snapshot) Size() int64 {
	var n int64
	for _, f := range s.Files {
		n += f.Size
	}
	return n
}

// Partitions are the official snapshot's task folders; --partition keeps
// one of them and the root files.
var Partitions = map[string]string{"fl2va": "FL2VA", "ref2va": "Ref2VA"}

// revisionInfo is the part of /api/models/REPO/revision/REV?blobs=true
// the download reads.
type revisionInfo struct {
	SHA      string `json:"sha"`
	Siblings []struct {
		RFilename string `json:"rfilename"`
		BlobID    string `json:"blobId"`
		Size      *int64 `json:"size"`
		LFS       *struct {
			SHA256 string `json:"sha256"`
			Size   int64  `json:"size"`
		} `json:"lfs"`
	} `json:"siblings"`
}

// List asks the hub for repo's files at revision ("" is main) and keeps
// those of one partition ("" keeps everything).
func (c *Client) List(ctx context.Context, repo, revision, partition string) (*Snapshot, error) {
	if err := checkRepo(repo); err != nil {
		return nil, err
	}
	if revision == "" {
		revision = "main"
	}
	folder := ""
	if partition != "" {
		var ok bool
		if folder, ok = Partitions[strings.ToLower(partition)]; !ok {
			return nil, fmt.Errorf("download: unknown partition %q; use fl2va or ref2va", partition)
		}
	}
	u := c.base.JoinPath("api", "models", repo, "revision", url.PathEscape(revision))
	u.RawQuery = "blobs=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("download: list %s: %w", repo, err)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download: cannot reach the hub at %s to list %s: %w", c.base.Host, repo, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, c.statusError(resp, repo, "", revision)
	}
	var info revisionInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return nil, fmt.Errorf("download: the hub's file list for %s is not valid JSON: %w", repo, err)
	}
	s := &Snapshot{Repo: repo, Revision: revision, Commit: info.SHA}
	if s.Commit == "" {
		s.Commit = revision
	}
	for _, sib := range info.Siblings {
		if folder != "" && strings.Contains(sib.RFilename, "/") && !strings.HasPrefix(sib.RFilename, folder+"/") {
			continue
		}
		f, err := listedFile(repo, sib.RFilename, sib.BlobID, sib.Size, sib.LFS)
		if err != nil {
			return nil, err
		}
		s.Files = append(s.Files, f)
	}
	if folder != "" && !hasPrefix(s.Files, folder+"/") {
		return nil, fmt.Errorf("download: %s has no %s/ folder at %s, so it has no %s partition; leave out --partition", repo, folder, revision, partition)
	}
	sort.Slice(s.Files, func(i, j int) bool { return s.Files[i].Path < s.Files[j].Path })
	return s, nil
}

// listedFile checks one listed file. The path must stay inside the
// download folder whatever the hub says.
func listedFile(repo, name, blob string, size *int64, lfs *struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}) (File, error) {
	if name == "" || !filepath.IsLocal(filepath.FromSlash(name)) || path.Clean(name) != name {
		return File{}, fmt.Errorf("download: the hub lists a file of %s named %q, which would land outside the download folder; refusing the list", repo, name)
	}
	f := File{Path: name, BlobID: blob}
	switch {
	case lfs != nil:
		f.Size, f.SHA256 = lfs.Size, strings.ToLower(lfs.SHA256)
		if len(f.SHA256) != 64 {
			return File{}, fmt.Errorf("download: the hub lists %s of %s without a valid SHA-256; the list cannot be verified", name, repo)
		}
	case size != nil:
		f.Size = *size
	default:
		return File{}, fmt.Errorf("download: the hub lists %s of %s without a size; the list was not asked with blobs=true or the hub is not compatible", name, repo)
	}
	if f.Size < 0 {
		return File{}, fmt.Errorf("download: the hub lists %s of %s with a negative size", name, repo)
	}
	return f, nil
}

func hasPrefix(files []File, prefix string) bool {
	for _, f := range files {
		if strings.HasPrefix(f.Path, prefix) {
			return true
		}
	}
	return false
}

// checkRepo accepts the hub's repository ids: NAME or OWNER/NAME.
func checkRepo(repo string) error {
	parts := strings.Split(repo, "/")
	ok := len(parts) <= 2
	for _, p := range parts {
		if p == "" || p == "." || p == ".." || strings.ContainsAny(p, "\\?#% ") {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("download: %q is not a repository id; write it as OWNER/NAME, such as MiniMaxAI/MiniMax-H3", repo)
	}
	return nil
}

// resolveURL is where the hub serves one file of the snapshot's commit.
// JoinPath takes escaped elements.
func (c *Client) resolveURL(s *Snapshot, f File) string {
	segs := []string{s.Repo, "resolve", url.PathEscape(s.Commit)}
	for _, p := range strings.Split(f.Path, "/") {
		segs = append(segs, url.PathEscape(p))
	}
	return c.base.JoinPath(segs...).String()
}
