package ggml

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestABICheckCatchesDrift runs the same compile as make abi-check twice:
// our declarations must agree with the real headers, and a declaration
// changed on purpose (a float parameter made double) must be rejected.
func TestABICheckCatchesDrift(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc")
	}
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/ollama/ollama").Output()
	if err != nil {
		t.Skip("cannot locate the ollama module:", err)
	}
	inc := filepath.Join(strings.TrimSpace(string(out)), "ml", "backend", "ggml", "ggml", "include")
	decls, err := os.ReadFile("decls.h")
	if err != nil {
		t.Fatal(err)
	}
	compile := func(d string) (string, error) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "decls.h"), []byte(d), 0o644); err != nil {
			t.Fatal(err)
		}
		src := "#include \"ggml.h\"\n#include \"ggml-alloc.h\"\n#include \"ggml-backend.h\"\n#include \"ggml-cpu.h\"\n#include \"decls.h\"\n"
		if err := os.WriteFile(filepath.Join(dir, "check.c"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := exec.Command(gcc, "-std=c11", "-fsyntax-only", "-I"+inc, "-I"+dir, filepath.Join(dir, "check.c")).CombinedOutput()
		return string(b), err
	}
	if msg, err := compile(string(decls)); err != nil {
		t.Fatalf("declarations do not match the headers: %v\n%s", err, msg)
	}
	const orig = "struct ggml_tensor * ggml_rms_norm(struct ggml_context * ctx, struct ggml_tensor * a, float eps);"
	if !strings.Contains(string(decls), orig) {
		t.Fatal("decls.h no longer declares ggml_rms_norm as the test expects")
	}
	drift := strings.Replace(string(decls), orig, strings.Replace(orig, "float eps", "double eps", 1), 1)
	msg, err := compile(drift)
	if err == nil || !strings.Contains(msg, "conflicting types for") || !strings.Contains(msg, "ggml_rms_norm") {
		t.Fatalf("a drifted declaration was not caught: %v\n%s", err, msg)
	}
}
