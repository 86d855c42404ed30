package app

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConvertThenInfo(t *testing.T) {
	in := tinySnapshot(t)
	out := filepath.Join(t.TempDir(), "q8")
	var o, e bytes.Buffer
	if code := Main([]string{"convert", "-d", in, "--to", "q8_0", "-o", out}, &o, &e); code != 0 {
		t.Fatalf("convert exit %d: %s", code, e.String())
	}
	if !strings.Contains(e.String(), "100%") {
		t.Errorf("no final progress line in %q", e.String())
	}
	o.Reset()
	e.Reset()
	if code := Main([]string{"info", "-d", out, "--json"}, &o, &e); code != 0 {
		t.Fatalf("info on converted snapshot exit %d: %s", code, e.String())
	}
	if !strings.Contains(o.String(), `"dtype": "Q8_0+`) || !strings.Contains(o.String(), `"qkv_layout": "interleaved"`) {
		t.Fatalf("converted report lacks Q8_0 or the QKV layout:\n%s", o.String())
	}
	// A second convert into the same folder is refused and leaves it alone.
	before := listTree(out)
	if code := Main([]string{"convert", "-d", in, "--to", "q4_k", "-o", out}, &o, &e); code == 0 {
		t.Fatal("convert overwrote a non-empty folder")
	}
	if listTree(out) != before {
		t.Fatal("refused convert changed the output folder")
	}
	entries, _ := os.ReadDir(filepath.Dir(out))
	for _, en := range entries {
		if strings.Contains(en.Name(), ".tmp") {
			t.Fatalf("temporary folder %s left behind", en.Name())
		}
	}
	if code := Main([]string{"convert", "-d", in, "--to", "q5_1", "-o", out + "x"}, &o, &e); code != 2 {
		t.Fatalf("unsupported type exit %d, want 2", code)
	}
}
