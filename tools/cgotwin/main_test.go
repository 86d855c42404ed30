package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestTwinUpToDate fails when engine/ggml's committed !cgo twin is not what
// the wrappers generate: a wrapper was added or changed without go generate.
func TestTwinUpToDate(t *testing.T) {
	dir := filepath.Join("..", "..", "engine", "ggml")
	want, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, twinFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("engine/ggml/%s is stale: run `go generate ./engine/ggml/`", twinFile)
	}
}

// TestGenerateSkipsCHelpers: wrappers over Go types are twinned, helpers
// whose signatures hold C types (they are called only from cgo files) are
// not, and a source without haveCgo is refused.
func TestGenerateSkipsCHelpers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(sources[0], "package ggml\n\nimport \"C\"\nimport \"unsafe\"\n\nconst haveCgo = true\n\ntype ctensor = C.struct_ggml_tensor\n\n"+
		"func ct(h unsafe.Pointer) *ctensor { return (*ctensor)(h) }\nfunc cName(h unsafe.Pointer) string { return \"\" }\n")
	write(sources[1], "package ggml\n\nimport \"C\"\n\nfunc cdev(d C.int) int { return 0 }\nfunc cCount() int { return 0 }\n")
	src, err := generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"func cName(h unsafe.Pointer) string { panic(ErrNoCgo) }", "func cCount() int { panic(ErrNoCgo) }", "const haveCgo = false", `import "unsafe"`} {
		if !bytes.Contains(src, []byte(want)) {
			t.Errorf("twin lacks %q:\n%s", want, src)
		}
	}
	for _, bad := range []string{"func ct(", "func cdev(", "ctensor"} {
		if bytes.Contains(src, []byte(bad)) {
			t.Errorf("twin has %q:\n%s", bad, src)
		}
	}
	write(sources[0], "package ggml\n\nfunc cName() string { return \"\" }\n")
	if _, err := generate(dir); err == nil {
		t.Error("sources without haveCgo = true were accepted")
	}
}
