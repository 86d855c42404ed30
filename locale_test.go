package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

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
