package ggml

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// CUDALibrary is the file name ggml's CMake gives its CUDA backend when
// built as a loadable library (GGML_BACKEND_DL), as `make cuda` does. The
// binary keeps ggml-base and the CPU backend linked in; the CUDA backend
// is registered at run time, so one binary serves machines with and
// without an NVIDIA GPU.
const CUDALibrary = "libggml-cuda.so"

// LoadedBackend describes a backend library registered by LoadBackend.
type LoadedBackend struct {
	Path    string // absolute path of the library
	Name    string // ggml's registry name, e.g. "CUDA"
	Devices int    // devices it registered (0: no driver or no GPU)
}

var loaded struct {
	mu    sync.Mutex
	paths map[string]LoadedBackend
}

// LoadBackend registers the ggml backend library at path so that
// NewBackend finds its devices (DeviceAuto then prefers them to the CPU).
// Call it before NewBackend; backends opened earlier keep their devices.
// Loading the same file twice returns the first registration, because
// ggml would otherwise list its devices twice. A library that loads but
// registers no device (no NVIDIA driver, no GPU) stays registered,
// harmlessly, and the error wraps ErrNoDevice.
func LoadBackend(path string) (LoadedBackend, error) {
	if !haveCgo {
		return LoadedBackend{}, ErrNoCgo
	}
	if path == "" {
		return LoadedBackend{}, errors.New("ggml: load backend: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return LoadedBackend{}, fmt.Errorf("ggml: load backend: %w", err)
	}
	// ggml's loader would log and return NULL for these too; checking here
	// gives an error that names the cause.
	st, err := os.Stat(abs)
	if err != nil {
		return LoadedBackend{}, fmt.Errorf("ggml: load backend: %w", err)
	}
	if !st.Mode().IsRegular() {
		return LoadedBackend{}, fmt.Errorf("ggml: load backend %s: not a regular file", abs)
	}
	loaded.mu.Lock()
	defer loaded.mu.Unlock()
	if lb, ok := loaded.paths[abs]; ok {
		return lb, nil
	}
	name, devs, ok := cBackendLoad(abs)
	if !ok {
		return LoadedBackend{}, fmt.Errorf("ggml: load backend %s: ggml could not load it "+
			"(its log line above says why: a missing libggml-base.so beside it, CUDA runtime or driver)", abs)
	}
	lb := LoadedBackend{Path: abs, Name: name, Devices: devs}
	if loaded.paths == nil {
		loaded.paths = map[string]LoadedBackend{}
	}
	loaded.paths[abs] = lb
	if devs == 0 {
		return lb, fmt.Errorf("ggml: backend %s from %s: %w", name, abs, ErrNoDevice)
	}
	return lb, nil
}

// GPUDevice describes the first registered GPU device without opening a
// backend on it (cheap enough for the planner's machine detection); ok is
// false where there is none or no cgo.
func GPUDevice() (c Caps, ok bool) {
	if !haveCgo {
		return Caps{}, false
	}
	d := cDevByType(devGPU)
	if d == nil {
		return Caps{}, false
	}
	p := cDevProps(d)
	return Caps{Name: p.name, Description: p.description, GPU: true, Unified: p.integrated,
		MemoryFree: p.memFree, MemoryTotal: p.memTotal, ZeroCopy: p.bufferFromHostPtr}, true
}
