package app

import (
	"context"
	"os"
	"sync"
	"time"

	"h3studio/media"
)

// probeKey identifies a file's content as cheaply as a stat can: a file
// rewritten in place gets a new size or modification time, so it is probed
// again.
type probeKey struct {
	path  string
	size  int64
	mtime time.Time
}

// fileKey is the cache key of path as it is now.
func fileKey(path string) (probeKey, error) {
	st, err := os.Stat(path)
	if err != nil {
		return probeKey{}, err
	}
	return probeKey{path, st.Size(), st.ModTime()}, nil
}

// probeCacheSize bounds each file cache; a window session drops a few
// dozen files, and past the bound a cache simply starts over.
const probeCacheSize = 256

// fileCache holds what app learned of file versions (headers, full
// decodes, thumbnails, digests), keyed by probeKey or a key holding one;
// the zero value is empty and ready. It is safe for concurrent use.
type fileCache[K comparable, V any] struct {
	mu sync.Mutex
	m  map[K]V
}

func (c *fileCache[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *fileCache[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= probeCacheSize {
		c.m = map[K]V{}
	}
	c.m[k] = v
}

// probes caches media headers for the window, which probes a file when it
// is dropped and then re-plans on every edit, and for the CLI, whose render
// validates and plans a request before its job plans it.
var probes fileCache[probeKey, media.Info]

// Probe is media.Probe through a cache keyed by (path, size, mtime).
// Failures are not cached, so a file that was being written probes again;
// each is a *FileError, which Advice words for people.
func Probe(ctx context.Context, path string) (media.Info, error) {
	info, err := probe(ctx, path)
	if err != nil {
		return info, &FileError{path, err}
	}
	return info, nil
}

func probe(ctx context.Context, path string) (media.Info, error) {
	configureMedia()
	key, err := fileKey(path)
	if err != nil {
		return media.Probe(ctx, path) // media's own error names the problem
	}
	if info, ok := probes.get(key); ok {
		return info, nil
	}
	info, err := media.Probe(ctx, path)
	if err != nil {
		return info, err
	}
	probes.put(key, info)
	return info, nil
}
