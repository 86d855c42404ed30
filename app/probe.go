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

// probeCacheSize bounds the cache; a window session drops a few dozen
// files, and past the bound the cache simply starts over.
const probeCacheSize = 256

// probes caches media headers for the window, which probes a file when it
// is dropped and then re-plans on every edit, and for the CLI, whose render
// validates and plans a request before its job plans it.
var probes = struct {
	sync.Mutex
	m map[probeKey]media.Info
}{m: map[probeKey]media.Info{}}

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
	st, err := os.Stat(path)
	if err != nil {
		return media.Probe(ctx, path) // media's own error names the problem
	}
	key := probeKey{path, st.Size(), st.ModTime()}
	probes.Lock()
	info, ok := probes.m[key]
	probes.Unlock()
	if ok {
		return info, nil
	}
	info, err = media.Probe(ctx, path)
	if err != nil {
		return info, err
	}
	probes.Lock()
	if len(probes.m) >= probeCacheSize {
		clear(probes.m)
	}
	probes.m[key] = info
	probes.Unlock()
	return info, nil
}
