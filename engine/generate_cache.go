package engine

import (
	"container/list"
	"runtime"
	"sync"
	"syscall"
)

// cache keeps prepared inputs across generations of one Engine, as h3.c's
// interactive session does: the Qwen output of a presentation (keyed by
// prompt, spans and pixels) and each anchor or reference after its VAE
// encode (keyed by file identity and use), so another seed or step count
// re-runs only the denoise and the decode. Least recently used entries go
// first. Cached values are never modified after they are stored.
type cache struct {
	mu    sync.Mutex
	limit int
	order *list.List // front: most recent; values are *cacheEntry
	index map[string]*list.Element
}

type cacheEntry struct {
	key string
	val any
}

func newCache(limit int) *cache {
	return &cache{limit: limit, order: list.New(), index: map[string]*list.Element{}}
}

func (c *cache) get(key string) (any, bool) {
	if key == "" || c.limit <= 0 {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.index[key]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*cacheEntry).val, true
}

// has reports whether key is cached without making it recent.
func (c *cache) has(key string) bool {
	if key == "" || c.limit <= 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.index[key]
	return ok
}

func (c *cache) put(key string, val any) {
	if key == "" || c.limit <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.index[key]; ok {
		el.Value.(*cacheEntry).val = val
		c.order.MoveToFront(el)
		return
	}
	c.index[key] = c.order.PushFront(&cacheEntry{key: key, val: val})
	for c.order.Len() > c.limit {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.index, old.Value.(*cacheEntry).key)
	}
}

// peakRSS is the process's peak resident set in bytes (getrusage's
// ru_maxrss: kilobytes on Linux, bytes on macOS); 0 when unavailable.
func peakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss)
	}
	return int64(ru.Maxrss) * 1024
}
