// Package hubtest is a loopback model hub for the download tests and
// benchmark: it serves a folder as a repository through the routes the
// Hugging Face hub speaks (the revision listing with blobs, resolve), with
// large files redirected to a second listener that stands in for the
// hub's storage host, and faults a test can inject per file.
package hubtest

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LFSThreshold is the size from which a file is stored as an LFS object;
// .safetensors files are LFS at any size, as the hub's .gitattributes make
// them.
const LFSThreshold = 10 << 20

// Fault is a misbehaviour of the next request for a file.
type Fault int

const (
	// Drop sends half of the bytes asked for, then cuts the connection.
	Drop Fault = iota + 1
	// Corrupt flips one byte in the middle of the file.
	Corrupt
	// Missing answers 404 although the listing names the file.
	Missing
	// Short serves the file one byte shorter than listed, as complete.
	Short
	// Stall sends half of the bytes asked for, then nothing more until the
	// client gives up.
	Stall
	// Busy answers 503 Service Unavailable.
	Busy
)

// Request is one request a listener answered.
type Request struct {
	Host, Path, Range string
	// Auth reports whether an Authorization header arrived.
	Auth   bool
	Status int
}

// Server is the hub (Hub) and its storage host (CDN).
type Server struct {
	Hub, CDN *httptest.Server
	Repo     string
	Commit   string

	mu     sync.Mutex
	token  string
	files  map[string]*entry
	faults map[string][]Fault
	log    []Request
}

type entry struct {
	rel, path    string
	size         int64
	blob, sha256 string // sha256 only for LFS files
}

// New serves the files under dir as repo ("OWNER/NAME").
func New(repo, dir string) (*Server, error) {
	s := &Server{Repo: repo, files: map[string]*entry{}, faults: map[string][]Fault{}}
	commit := sha1.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		e, err := hashFile(filepath.ToSlash(rel), p)
		if err != nil {
			return err
		}
		s.files[e.rel] = e
		fmt.Fprintf(commit, "%s %s\n", e.blob, e.rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("hubtest: %w", err)
	}
	s.Commit = hex.EncodeToString(commit.Sum(nil))
	hub := http.NewServeMux()
	hub.HandleFunc("GET /api/models/"+repo+"/revision/{rev}", s.listing)
	hub.HandleFunc("GET /"+repo+"/resolve/{rev}/{path...}", s.resolve)
	hub.HandleFunc("GET /api/models/", func(w http.ResponseWriter, r *http.Request) {
		// As the hub: an unknown repository is 401, marked RepoNotFound.
		w.Header().Set("X-Error-Code", "RepoNotFound")
		http.Error(w, `{"error":"Repository not found"}`, http.StatusUnauthorized)
	})
	cdn := http.NewServeMux()
	cdn.HandleFunc("GET /blobs/{sha}", s.blob)
	s.Hub = httptest.NewServer(s.logged(hub))
	s.CDN = httptest.NewServer(s.logged(cdn))
	return s, nil
}

func hashFile(rel, p string) (*entry, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	e := &entry{rel: rel, path: p, size: st.Size()}
	blob, sum := sha1.New(), sha256.New()
	fmt.Fprintf(blob, "blob %d\x00", e.size)
	if _, err := io.Copy(io.MultiWriter(blob, sum), f); err != nil {
		return nil, err
	}
	e.blob = hex.EncodeToString(blob.Sum(nil))
	if e.size >= LFSThreshold || strings.HasSuffix(rel, ".safetensors") {
		e.sha256 = hex.EncodeToString(sum.Sum(nil))
	}
	return e, nil
}

// Close stops both listeners.
func (s *Server) Close() {
	s.Hub.Close()
	s.CDN.Close()
}

// SetToken makes token the only Bearer token the hub accepts ("": any
// request is served); a test may change it while a download runs, as when
// a token expires.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	s.token = token
	s.mu.Unlock()
}

// Inject queues a fault for the next request that serves path.
func (s *Server) Inject(path string, f Fault) {
	s.mu.Lock()
	s.faults[path] = append(s.faults[path], f)
	s.mu.Unlock()
}

// Requests returns the requests answered so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.log...)
}

// fault takes the next fault queued for path (0: none).
func (s *Server) fault(path string) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.faults[path]
	if len(q) == 0 {
		return 0
	}
	s.faults[path] = q[1:]
	return q[0]
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	token := s.token
	s.mu.Unlock()
	if token == "" || r.Header.Get("Authorization") == "Bearer "+token {
		return true
	}
	w.Header().Set("X-Error-Code", "GatedRepo")
	http.Error(w, `{"error":"Access to this repository is restricted"}`, http.StatusUnauthorized)
	return false
}

func (s *Server) knownRevision(r *http.Request) bool {
	rev := r.PathValue("rev")
	return rev == "main" || rev == s.Commit
}

type sibling struct {
	RFilename string `json:"rfilename"`
	BlobID    string `json:"blobId"`
	Size      int64  `json:"size"`
	LFS       *lfs   `json:"lfs,omitempty"`
}

type lfs struct {
	SHA256      string `json:"sha256"`
	Size        int64  `json:"size"`
	PointerSize int    `json:"pointerSize"`
}

func (s *Server) listing(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	if !s.knownRevision(r) {
		http.Error(w, `{"error":"Repository not found"}`, http.StatusNotFound)
		return
	}
	var sibs []sibling
	for _, e := range s.files {
		sib := sibling{RFilename: e.rel, BlobID: e.blob, Size: e.size}
		if e.sha256 != "" {
			sib.LFS = &lfs{SHA256: e.sha256, Size: e.size, PointerSize: 134}
		}
		sibs = append(sibs, sib)
	}
	sort.Slice(sibs, func(i, j int) bool { return sibs[i].RFilename < sibs[j].RFilename })
	raw, err := json.Marshal(map[string]any{"id": s.Repo, "sha": s.Commit, "siblings": sibs})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(raw)
}

func (s *Server) resolve(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	e, ok := s.files[r.PathValue("path")]
	if !ok || !s.knownRevision(r) {
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	w.Header().Set("X-Repo-Commit", s.Commit)
	if e.sha256 == "" {
		w.Header().Set("ETag", `"`+e.blob+`"`)
		s.serve(w, r, e)
		return
	}
	w.Header().Set("X-Linked-Size", strconv.FormatInt(e.size, 10))
	w.Header().Set("X-Linked-Etag", `"`+e.sha256+`"`)
	q := url.Values{"file": {e.rel}, "expires": {strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)}}
	http.Redirect(w, r, s.CDN.URL+"/blobs/"+e.sha256+"?"+q.Encode(), http.StatusFound)
}

// blob serves an LFS object. The file name in the query keeps two paths
// with the same bytes apart, so a fault injected for one hits only it.
func (s *Server) blob(w http.ResponseWriter, r *http.Request) {
	e, ok := s.files[r.URL.Query().Get("file")]
	if !ok || e.sha256 != r.PathValue("sha") {
		http.Error(w, "NoSuchKey", http.StatusNotFound)
		return
	}
	w.Header().Set("ETag", `"`+e.sha256+`"`)
	s.serve(w, r, e)
}

// serve answers with the file's bytes (Range and 416 as net/http does),
// applying the next injected fault.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, e *entry) {
	f, err := os.Open(e.path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	var content io.ReadSeeker = io.NewSectionReader(f, 0, e.size)
	switch s.fault(e.rel) {
	case Missing:
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	case Busy:
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	case Short:
		content = io.NewSectionReader(f, 0, e.size-1)
	case Corrupt:
		content = &flipped{ReaderAt: f, size: e.size, at: e.size / 2}
	case Drop:
		w = &dropWriter{ResponseWriter: w, left: -1}
	case Stall:
		w = &dropWriter{ResponseWriter: w, left: -1, stall: r.Context().Done()}
	}
	http.ServeContent(w, r, "", time.Time{}, content)
}

// flipped reads a file with the byte at offset at inverted.
type flipped struct {
	io.ReaderAt
	size, at, off int64
}

func (f *flipped) Read(p []byte) (int, error) {
	if f.off >= f.size {
		return 0, io.EOF
	}
	n, err := f.ReadAt(p[:min(int64(len(p)), f.size-f.off)], f.off)
	if i := f.at - f.off; i >= 0 && i < int64(n) {
		p[i] ^= 0xff
	}
	f.off += int64(n)
	if err == io.EOF && f.off < f.size {
		err = nil
	}
	return n, err
}

func (f *flipped) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
		f.off = off
	case io.SeekCurrent:
		f.off += off
	case io.SeekEnd:
		f.off = f.size + off
	}
	return f.off, nil
}

// dropWriter passes half of the announced body, then aborts the
// handler, which closes the connection mid-transfer; with stall set it
// first waits for the client to give up.
type dropWriter struct {
	http.ResponseWriter
	left  int64 // -1 until the headers are written
	stall <-chan struct{}
}

func (d *dropWriter) Write(p []byte) (int, error) {
	if d.left < 0 {
		n, _ := strconv.ParseInt(d.Header().Get("Content-Length"), 10, 64)
		d.left = n / 2
	}
	if int64(len(p)) < d.left {
		d.left -= int64(len(p))
		return d.ResponseWriter.Write(p)
	}
	d.ResponseWriter.Write(p[:d.left])
	d.ResponseWriter.(http.Flusher).Flush()
	if d.stall != nil {
		<-d.stall
	}
	panic(http.ErrAbortHandler)
}

// logged records each request with the status it got.
func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			s.mu.Lock()
			s.log = append(s.log, Request{Host: r.Host, Path: r.URL.Path, Range: r.Header.Get("Range"), Auth: r.Header.Get("Authorization") != "", Status: rec.status})
			s.mu.Unlock()
		}()
		h.ServeHTTP(rec, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
