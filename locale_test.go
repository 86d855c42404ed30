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

// TestVersionPrintsOneLine: the CLI prints only its own output in every
// locale, including the C locales of containers and CI, where Fyne's lang
// init used to log three lines of "Error parsing user locale C" first
// (package locale). The binary is built, not run through go test's own
// process, because the failure happens at package init.
func TestVersionPrintsOneLine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := builtBinary(t)
	for _, name := range []string{"LANG", "LC_ALL"} {
		for _, value := range []string{"C.UTF-8", "C", "POSIX", "C.utf8", "POSIX.UTF-8"} {
			cmd := exec.Command(bin, "version")
			// Only PATH besides the locale: a stray LANGUAGE or LC_* of
			// the developer's shell must not decide the test.
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), name + "=" + value}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s=%s h3studio version: %v\n%s", name, value, err, out)
			}
			if lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "h3studio ") {
				t.Errorf("%s=%s h3studio version printed %d lines, want 1:\n%s", name, value, len(lines), out)
			}
		}
	}
}
