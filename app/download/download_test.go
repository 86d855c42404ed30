package download

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"h3studio/app/download/hubtest"
)

const (
	testRepo  = "MiniMaxAI/MiniMax-H3"
	goodToken = "hf_good_token"
)

// The source tree: root files, two partitions, LFS and small files.
var sourceFiles = map[string]int{
	"model_index.json":              89,
	"README.md":                     3000,
	"FL2VA/model_index.json":        669,
	"FL2VA/transformer/config.json": 558,
	"FL2VA/transformer/model-00001-of-00002.safetensors": 3<<20 + 17,
	"FL2VA/transformer/model-00002-of-00002.safetensors": 1<<20 + 5,
	"FL2VA/video_vae/blob.bin":                           hubtest.LFSThreshold + 1,
	"Ref2VA/model_index.json":                            657,
	"Ref2VA/transformer/model.safetensors":               2 << 20,
}

const bigFile = "FL2VA/video_vae/blob.bin"

func writeSource(t testing.TB, dir string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	for p, n := range sourceFiles {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type fixture struct {
	src string
	hub *hubtest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	src := t.TempDir()
	writeSource(t, src)
	hub, err := hubtest.New(testRepo, src)
	if err != nil {
		t.Fatal(err)
	}
	hub.SetToken(goodToken)
	t.Cleanup(hub.Close)
	return &fixture{src: src, hub: hub}
}

func (fx *fixture) client(t *testing.T, token string) *Client {
	t.Helper()
	c, err := New(Options{Endpoint: fx.hub.Hub.URL, Token: token, RetryDelay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fetch lists and downloads the repository (or one partition) into dir.
func (fx *fixture) fetch(t *testing.T, dir, partition string) (Result, error) {
	t.Helper()
	c := fx.client(t, goodToken)
	s, err := c.List(context.Background(), testRepo, "", partition)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(s, dir)
	if err != nil {
		t.Fatal(err)
	}
	return c.Fetch(context.Background(), p, nil)
}

// tree maps every file under dir to its bytes, leaving out the manifest.
func tree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == ManifestName {
			return nil
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func assertSameTree(t *testing.T, got, want map[string][]byte) {
	t.Helper()
	for p, b := range want {
		if !bytes.Equal(got[p], b) {
			t.Errorf("%s: %d bytes, want the source's %d", p, len(got[p]), len(b))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s is in the download but not in the source", p)
		}
	}
}

func requestsFor(hub *hubtest.Server, suffix string) []hubtest.Request {
	var out []hubtest.Request
	for _, r := range hub.Requests() {
		if strings.HasSuffix(r.Path, suffix) {
			out = append(out, r)
		}
	}
	return out
}

// The whole tree arrives byte for byte; large files come from the
// storage listener, which never sees the token, and the hub always does.
func TestFetchTree(t *testing.T) {
	fx := newFixture(t)
	dst := t.TempDir()
	r, err := fx.fetch(t, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, tree(t, dst), tree(t, fx.src))
	cdnHost := strings.TrimPrefix(fx.hub.CDN.URL, "http://")
	var viaCDN int
	for _, q := range fx.hub.Requests() {
		if q.Host == cdnHost {
			viaCDN++
			if q.Auth {
				t.Errorf("the storage host %s received the token for %s", q.Host, q.Path)
			}
		} else if !q.Auth {
			t.Errorf("the hub received no token for %s", q.Path)
		}
	}
	if viaCDN != 4 {
		t.Errorf("%d requests reached the storage host, want the 4 LFS files", viaCDN)
	}
	if r.Fetched != len(sourceFiles) || r.Moved != total() {
		t.Errorf("result %+v, want %d files and %d bytes", r, len(sourceFiles), total())
	}
}

func total() int64 {
	var n int64
	for _, s := range sourceFiles {
		n += int64(s)
	}
	return n
}

// A second run finds everything complete and makes no file request.
func TestSecondRunTransfersNothing(t *testing.T) {
	fx := newFixture(t)
	dst := t.TempDir()
	if _, err := fx.fetch(t, dst, ""); err != nil {
		t.Fatal(err)
	}
	before := len(fx.hub.Requests())
	r, err := fx.fetch(t, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	after := fx.hub.Requests()[before:]
	if r.Moved != 0 || r.Skipped != len(sourceFiles) || len(after) != 1 {
		t.Errorf("second run: %+v and %d requests %v, want only the listing", r, len(after), after)
	}
}

// --partition fl2va keeps FL2VA/ and the root files.
func TestPartition(t *testing.T) {
	fx := newFixture(t)
	dst := t.TempDir()
	if _, err := fx.fetch(t, dst, "fl2va"); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{}
	for p, b := range tree(t, fx.src) {
		if !strings.HasPrefix(p, "Ref2VA/") {
			want[p] = b
		}
	}
	assertSameTree(t, tree(t, dst), want)
	c := fx.client(t, goodToken)
	if _, err := c.List(context.Background(), testRepo, "", "t2v"); err == nil || !strings.Contains(err.Error(), "fl2va or ref2va") {
		t.Errorf("unknown partition: %v", err)
	}
}

// A connection dropped mid-file is resumed with a Range request from
// where it stopped, not restarted from zero.
func TestResumeAfterDrop(t *testing.T) {
	fx := newFixture(t)
	fx.hub.Inject(bigFile, hubtest.Drop)
	dst := t.TempDir()
	r, err := fx.fetch(t, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, tree(t, dst), tree(t, fx.src))
	reqs := requestsFor(fx.hub, "/blobs/"+fx.sha(t, bigFile))
	if len(reqs) != 2 || reqs[0].Range != "" || reqs[1].Status != 206 || !strings.HasPrefix(reqs[1].Range, "bytes=") || reqs[1].Range == "bytes=0-" {
		t.Fatalf("requests for the dropped file: %+v, want a full one then a 206 from the drop point", reqs)
	}
	t.Logf("resumed with %s", reqs[1].Range)
	if r.Moved != total() {
		t.Errorf("moved %d bytes, want exactly the tree's %d (nothing sent twice)", r.Moved, total())
	}
}

// A transfer that stops sending without closing is given up after the
// stall timeout and resumed from where it stopped.
func TestResumeAfterStall(t *testing.T) {
	fx := newFixture(t)
	fx.hub.Inject(bigFile, hubtest.Stall)
	c, err := New(Options{Endpoint: fx.hub.Hub.URL, Token: goodToken, RetryDelay: time.Millisecond, StallTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.List(context.Background(), testRepo, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(s, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := c.Fetch(context.Background(), p, nil); err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, tree(t, p.Dir), tree(t, fx.src))
	reqs := requestsFor(fx.hub, "/blobs/"+fx.sha(t, bigFile))
	if len(reqs) != 2 || reqs[1].Status != 206 || reqs[1].Range == "bytes=0-" {
		t.Errorf("requests for the stalled file: %+v, want a 206 resuming it", reqs)
	}
	t.Logf("stalled transfer resumed with %s after %v", reqs[len(reqs)-1].Range, time.Since(start).Round(time.Millisecond))
}

func (fx *fixture) sha(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fx.src, filepath.FromSlash(path)))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func itoa(n int) string { return strconv.Itoa(n) }

// A .partial file left by a run that was stopped resumes after a restart.
func TestResumeAfterRestart(t *testing.T) {
	fx := newFixture(t)
	dst := t.TempDir()
	src, err := os.ReadFile(filepath.Join(fx.src, bigFile))
	if err != nil {
		t.Fatal(err)
	}
	half := len(src) / 3
	part := filepath.Join(dst, filepath.FromSlash(bigFile)) + PartialSuffix
	if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(part, src[:half], 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := fx.fetch(t, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, tree(t, dst), tree(t, fx.src))
	reqs := requestsFor(fx.hub, "/blobs/"+fx.sha(t, bigFile))
	if len(reqs) != 1 || reqs[0].Status != 206 || reqs[0].Range != "bytes="+itoa(half)+"-" {
		t.Errorf("requests: %+v, want one 206 for bytes=%d-", reqs, half)
	}
	if r.Moved != total()-int64(half) {
		t.Errorf("moved %d, want %d", r.Moved, total()-int64(half))
	}
}

// A partial file that already holds every byte (the run stopped while
// verifying it) gets a 416 and is verified and kept; one longer than the
// listed file (another revision's) starts again.
func TestRangeNotSatisfiable(t *testing.T) {
	fx := newFixture(t)
	dst := t.TempDir()
	src, err := os.ReadFile(filepath.Join(fx.src, bigFile))
	if err != nil {
		t.Fatal(err)
	}
	const stale = "FL2VA/transformer/config.json"
	staleSrc, err := os.ReadFile(filepath.Join(fx.src, stale))
	if err != nil {
		t.Fatal(err)
	}
	for p, b := range map[string][]byte{bigFile: src, stale: append(bytes.Repeat([]byte("x"), 10), staleSrc...)} {
		part := filepath.Join(dst, filepath.FromSlash(p)) + PartialSuffix
		if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(part, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r, err := fx.fetch(t, dst, "")
	if err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, tree(t, dst), tree(t, fx.src))
	reqs := requestsFor(fx.hub, "/blobs/"+fx.sha(t, bigFile))
	if len(reqs) != 1 || reqs[0].Status != 416 {
		t.Errorf("requests for the complete partial: %+v, want one 416", reqs)
	}
	if want := total() - int64(len(src)); r.Moved != want {
		t.Errorf("moved %d, want %d", r.Moved, want)
	}
}

// A 416 whose length differs from the partial's (the hub's file is not
// the one the partial began) starts the file again from zero.
func TestRangeMismatchRestarts(t *testing.T) {
	fx := newFixture(t)
	dst := t.TempDir()
	src, err := os.ReadFile(filepath.Join(fx.src, bigFile))
	if err != nil {
		t.Fatal(err)
	}
	part := filepath.Join(dst, filepath.FromSlash(bigFile)) + PartialSuffix
	if err := os.MkdirAll(filepath.Dir(part), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(part, src, 0o644); err != nil {
		t.Fatal(err)
	}
	fx.hub.Inject(bigFile, hubtest.Short) // the next answer is a 416 for one byte less
	if _, err := fx.fetch(t, dst, ""); err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, tree(t, dst), tree(t, fx.src))
	reqs := requestsFor(fx.hub, "/blobs/"+fx.sha(t, bigFile))
	if len(reqs) != 2 || reqs[0].Status != 416 || reqs[1].Status != 200 || reqs[1].Range != "" {
		t.Errorf("requests: %+v, want a 416 then the whole file", reqs)
	}
}

// A corrupt byte in a large or a small file is refused in one sentence
// naming the file, and nothing of it is left behind.
func TestCorruptRefused(t *testing.T) {
	for _, path := range []string{bigFile, "README.md"} {
		t.Run(path, func(t *testing.T) {
			fx := newFixture(t)
			fx.hub.Inject(path, hubtest.Corrupt)
			dst := t.TempDir()
			_, err := fx.fetch(t, dst, "")
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != path || !strings.Contains(err.Error(), "is corrupt") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("got %v, want one corruption sentence naming %s", err, path)
			}
			t.Log(err)
			assertAbsent(t, dst, path)
			if got := tree(t, dst); len(got) != len(sourceFiles)-1 {
				t.Errorf("%d files arrived, want all %d others", len(got), len(sourceFiles)-1)
			}
		})
	}
}

func assertAbsent(t *testing.T, dst, path string) {
	t.Helper()
	final := filepath.Join(dst, filepath.FromSlash(path))
	for _, p := range []string{final, final + PartialSuffix} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after the refusal (%v)", p, err)
		}
	}
}

// A file served shorter than listed is refused as truncated.
func TestTruncatedRefused(t *testing.T) {
	fx := newFixture(t)
	const path = "FL2VA/transformer/model-00002-of-00002.safetensors"
	fx.hub.Inject(path, hubtest.Short)
	dst := t.TempDir()
	_, err := fx.fetch(t, dst, "")
	if err == nil || !strings.Contains(err.Error(), path+" is truncated") {
		t.Fatalf("got %v", err)
	}
	assertAbsent(t, dst, path)
}

// A busy hub (503) is asked again; the file arrives.
func TestRetryWhenBusy(t *testing.T) {
	fx := newFixture(t)
	const path = "README.md"
	fx.hub.Inject(path, hubtest.Busy)
	fx.hub.Inject(path, hubtest.Busy)
	dst := t.TempDir()
	if _, err := fx.fetch(t, dst, ""); err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, tree(t, dst), tree(t, fx.src))
	var codes []int
	for _, r := range requestsFor(fx.hub, "/"+path) {
		codes = append(codes, r.Status)
	}
	if len(codes) != 3 || codes[0] != 503 || codes[2] != 200 {
		t.Errorf("statuses %v, want 503, 503, 200", codes)
	}
}

// A listed file the hub answers 404 for fails alone; the rest arrives.
func TestMissingFile(t *testing.T) {
	fx := newFixture(t)
	const path = "FL2VA/model_index.json"
	fx.hub.Inject(path, hubtest.Missing)
	dst := t.TempDir()
	_, err := fx.fetch(t, dst, "")
	var fe *FileError
	if !errors.As(err, &fe) || fe.Path != path || !strings.Contains(err.Error(), "404") {
		t.Fatalf("got %v", err)
	}
	assertAbsent(t, dst, path)
	if got := tree(t, dst); len(got) != len(sourceFiles)-1 {
		t.Errorf("%d files arrived, want %d", len(got), len(sourceFiles)-1)
	}
}

// An expired token gets one sentence about HF_TOKEN that never contains
// the token; no token at all is told the repository needs one.
func TestRefusedToken(t *testing.T) {
	fx := newFixture(t)
	for token, want := range map[string]string{"hf_expired_XYZ": "refused the token", "": "needs a token"} {
		_, err := fx.client(t, token).List(context.Background(), testRepo, "", "")
		if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "HF_TOKEN") {
			t.Errorf("token %q: got %v, want ErrAuth saying %q", token, err, want)
		}
		if token != "" && strings.Contains(err.Error(), token) {
			t.Errorf("the error shows the token: %v", err)
		}
	}
}

// An unknown repository is told apart from a gated one, as the hub marks
// it, and an unknown revision names --revision.
func TestUnknownRepository(t *testing.T) {
	fx := newFixture(t)
	c := fx.client(t, goodToken)
	if _, err := c.List(context.Background(), testRepo, "no-such-branch", ""); err == nil || !strings.Contains(err.Error(), "--revision") {
		t.Errorf("unknown revision: %v", err)
	}
	if _, err := c.List(context.Background(), "someone/else", "", ""); err == nil || !strings.Contains(err.Error(), "no repository someone/else") {
		t.Errorf("unknown repository: %v", err)
	}
	if _, err := c.List(context.Background(), "a/b/c", "", ""); err == nil || !strings.Contains(err.Error(), "OWNER/NAME") {
		t.Errorf("malformed id: %v", err)
	}
}

// A token that expires after the listing stops the download with one
// sentence, however many files were under way, and leaves no empty
// partial files behind.
func TestTokenExpiresDuringDownload(t *testing.T) {
	fx := newFixture(t)
	c := fx.client(t, goodToken)
	s, err := c.List(context.Background(), testRepo, "", "")
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	p, err := Prepare(s, dst)
	if err != nil {
		t.Fatal(err)
	}
	fx.hub.SetToken("hf_rotated")
	_, err = c.Fetch(context.Background(), p, nil)
	if !errors.Is(err, ErrAuth) || strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), goodToken) {
		t.Fatalf("got %q, want one ErrAuth sentence without the token", err)
	}
	if left := tree(t, dst); len(left) != 0 {
		t.Errorf("left behind: %d files", len(left))
	}
}

func TestListRefusesEscapingPaths(t *testing.T) {
	size := int64(1)
	for _, name := range []string{"../x", "/etc/passwd", "a/../../b", "a//b", ""} {
		if _, err := listedFile(testRepo, name, "", &size, nil); err == nil {
			t.Errorf("%q was accepted", name)
		}
	}
	if _, err := listedFile(testRepo, "FL2VA/a.json", "", &size, nil); err != nil {
		t.Error(err)
	}
}

// Progress ends with one final event that counts every byte and file,
// including the ones already complete.
func TestProgressEvents(t *testing.T) {
	fx := newFixture(t)
	dst := t.TempDir()
	if _, err := fx.fetch(t, dst, "fl2va"); err != nil {
		t.Fatal(err)
	}
	c := fx.client(t, goodToken)
	s, err := c.List(context.Background(), testRepo, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Prepare(s, dst)
	if err != nil {
		t.Fatal(err)
	}
	var events []Progress
	if _, err := c.Fetch(context.Background(), p, func(e Progress) { events = append(events, e) }); err != nil {
		t.Fatal(err)
	}
	first, last := events[0], events[len(events)-1]
	if first.Done != s.Size()-p.Need || first.FilesDone != len(p.Complete) || first.Final {
		t.Errorf("first event %+v, want the %d complete files' %d bytes counted", first, len(p.Complete), s.Size()-p.Need)
	}
	if !last.Final || last.Done != total() || last.Total != total() || last.FilesDone != len(sourceFiles) || last.ETA != 0 {
		t.Errorf("final event %+v, want all %d files and %d bytes", last, len(sourceFiles), total())
	}
	for i := 1; i < len(events); i++ {
		if events[i].Done < events[i-1].Done {
			t.Errorf("Done went back from %d to %d", events[i-1].Done, events[i].Done)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{12: "12 B", 1536: "1.5 KB", 134 << 30: "134.0 GB", 3 << 40: "3.0 TB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
