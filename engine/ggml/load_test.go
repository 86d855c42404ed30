package ggml

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadBackendRefusals: every path that cannot be a backend library is an
// error naming it, and none reaches an abort inside ggml's loader.
func TestLoadBackendRefusals(t *testing.T) {
	_, hadGPU := GPUDevice() // Metal on a Mac
	dir := t.TempDir()
	junk := filepath.Join(dir, CUDALibrary)
	if err := os.WriteFile(junk, []byte("not an ELF file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{"", "empty path"},
		{filepath.Join(dir, "missing.so"), "no such file"},
		{dir, "not a regular file"},
		{junk, "could not load"},
	} {
		_, err := LoadBackend(c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadBackend(%q) = %v, want an error containing %q", c.path, err, c.want)
		}
	}
	// A refused library registers nothing.
	if hadGPU {
		return
	}
	if _, ok := GPUDevice(); ok {
		t.Error("a GPU device is registered after only refused loads")
	}
	if _, err := NewBackend(BackendOptions{Device: DeviceGPU}); !errors.Is(err, ErrNoDevice) {
		t.Errorf("NewBackend(DeviceGPU) = %v, want ErrNoDevice", err)
	}
}
