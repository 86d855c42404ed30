package app

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"h3studio/app/download"
	"h3studio/app/download/hubtest"
	"h3studio/engine/weights"
)

// tinyHub serves a freshly written tiny snapshot as the official repo.
func tinyHub(t *testing.T) (src string, hub *hubtest.Server) {
	t.Helper()
	src = filepath.Join(t.TempDir(), "src")
	if err := weights.WriteTiny(src, weights.TinyOptions{Seed: 3}); err != nil {
		t.Fatal(err)
	}
	hub, err := hubtest.New(DefaultRepo, src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hub.Close)
	return src, hub
}

func runMain(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(args, &out, &errb)
	return code, out.String(), errb.String()
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == download.ManifestName {
			return err
		}
		out[filepath.ToSlash(rel)], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, got, want map[string][]byte) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d files, want %d", len(got), len(want))
	}
	for p, b := range want {
		if !bytes.Equal(got[p], b) {
			t.Errorf("%s differs from the source (%d bytes, want %d)", p, len(got[p]), len(b))
		}
	}
}

// The "done when": a byte-identical tree, a dropped transfer
// resumed with a Range request, a second run that moves nothing, and info's
// report of the finished folder.
func TestDownloadCommand(t *testing.T) {
	src, hub := tinyHub(t)
	const dropped = "FL2VA/audio_vae/model.safetensors"
	hub.Inject(dropped, hubtest.Drop)
	dst := filepath.Join(t.TempDir(), "MiniMax-H3")
	code, out, errs := runMain("download", "--endpoint", hub.Hub.URL, DefaultRepo, dst)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sameTree(t, readTree(t, dst), readTree(t, src))
	var ranges []string
	for _, r := range hub.Requests() {
		if r.Range != "" && strings.HasPrefix(r.Path, "/blobs/") {
			ranges = append(ranges, r.Range)
		}
	}
	if len(ranges) != 1 || ranges[0] == "bytes=0-" {
		t.Errorf("range requests %q, want one resuming the dropped file", ranges)
	}
	for _, want := range []string{"65 files", "0 already here", "partition fl2va", "partition ref2va"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	before := len(hub.Requests())
	code, out, errs = runMain("download", "--endpoint", hub.Hub.URL, DefaultRepo, dst)
	if code != 0 || !strings.Contains(out, "65 already here; 0 B to fetch") || len(hub.Requests()) != before+1 {
		t.Errorf("second run: exit %d, %d requests, output:\n%s%s", code, len(hub.Requests())-before, out, errs)
	}
}

// --partition (here after the positional arguments) fetches one partition
// and the root files.
func TestDownloadPartition(t *testing.T) {
	src, hub := tinyHub(t)
	dst := t.TempDir()
	code, out, errs := runMain("download", "--endpoint", hub.Hub.URL, DefaultRepo, dst, "--partition", "fl2va")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := readTree(t, src)
	for p := range want {
		if strings.HasPrefix(p, "Ref2VA/") {
			delete(want, p)
		}
	}
	sameTree(t, readTree(t, dst), want)
	if !strings.Contains(out, "partition fl2va") || strings.Contains(out, "partition ref2va") {
		t.Errorf("info of the partition download:\n%s", out)
	}
}

// A corrupt file exits non-zero with one sentence naming it and leaves
// nothing at its final path.
func TestDownloadCorrupt(t *testing.T) {
	_, hub := tinyHub(t)
	const bad = "FL2VA/transformer/model-00001-of-00002.safetensors"
	hub.Inject(bad, hubtest.Corrupt)
	dst := t.TempDir()
	code, _, errs := runMain("download", "--endpoint", hub.Hub.URL, DefaultRepo, dst)
	lines := strings.Split(strings.TrimSpace(errs), "\n")
	last := lines[len(lines)-1]
	if code != 1 || strings.Count(errs, "h3studio download:") != 1 || !strings.HasPrefix(last, "h3studio download: download: "+bad+" is corrupt") {
		t.Fatalf("exit %d, stderr %q; want 1 and one line naming %s", code, errs, bad)
	}
	t.Log(last)
	for _, p := range []string{bad, bad + ".partial"} {
		if _, err := os.Stat(filepath.Join(dst, p)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists: %v", p, err)
		}
	}
}

func TestDownloadUsage(t *testing.T) {
	code, _, errs := runMain("download", "MiniMaxAI/MiniMax-H3")
	if code != 2 || !strings.Contains(errs, "usage: h3studio download") {
		t.Errorf("exit %d: %s", code, errs)
	}
}

// Off a terminal the progress is a plain line per tenth of the way and a
// last one; on a terminal one bar rewrites itself and ends with a newline.
func TestDownloadProgressLines(t *testing.T) {
	events := []download.Progress{
		{Files: 3, Total: 1000, Done: 0},
		{Files: 3, Total: 1000, Done: 50, Rate: 2 << 20, ETA: 90 * time.Second},
		{Files: 3, Total: 1000, Done: 120, FilesDone: 1, Rate: 2 << 20, ETA: 80 * time.Second},
		{Files: 3, Total: 1000, Done: 1000, FilesDone: 3, Final: true},
	}
	var plain bytes.Buffer
	pp := &progressPrinter{w: &plain}
	for _, e := range events {
		pp.print(e)
	}
	want := "0 B of 1000 B (0%), 0 of 3 files\n" +
		"120 B of 1000 B (12%), 1 of 3 files, 2.0 MB/s, 1m20s left\n" +
		"1000 B of 1000 B (100%), 3 of 3 files\n"
	if plain.String() != want {
		t.Errorf("plain lines:\n%s\nwant:\n%s", plain.String(), want)
	}
	var term bytes.Buffer
	tp := &progressPrinter{w: &term, terminal: true}
	for _, e := range events {
		tp.print(e)
	}
	out := term.String()
	if strings.Count(out, "\r[") != len(events) || strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "] 1000 B of 1000 B (100%), 3 of 3 files\x1b[K\n") || !strings.Contains(out, "[===   ") {
		t.Errorf("terminal bar: %q", out)
	}
}
