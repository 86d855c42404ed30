package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
	buildOut  []byte
)

// builtBinary builds h3studio once for the tests that run it (what they
// check happens at package init or before the window opens, outside
// go test's own process).
func builtBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "h3studio-bin-"); buildErr != nil {
			return
		}
		buildOut, buildErr = exec.Command("go", "build", "-o", filepath.Join(buildDir, "h3studio"), ".").CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return filepath.Join(buildDir, "h3studio")
}

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// TestNoDisplayOneSentence: started for its window where there is no
// display, the binary says so in one line and exits; GLFW used to panic
// with a Go stack trace on the window's first cursor.
func TestNoDisplayOneSentence(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		t.Skip("a Mac or Windows session always has a display")
	}
	cmd := exec.Command(builtBinary(t))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("exit %v, want status 2", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "no display found") || !strings.Contains(lines[0], "render -p") {
		t.Errorf("printed %d lines, want one sentence naming the headless command:\n%s", len(lines), out)
	}
}
