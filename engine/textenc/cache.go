package textenc

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"sync"
)

// Key identifies an encoding: a hash of everything the output depends on
// (the checkpoint's files, the config, layers run, precisions, and the
// input's ids, positions, tags and vision pixels).
type Key [32]byte

// Key hashes in together with the model's identity.
func (m *Model) Key(in Input) Key {
	h := sha256.New()
	var buf [8]byte
	putInt := func(v int) {
		binary.LittleEndian.PutUint64(buf[:], uint64(v))
		h.Write(buf[:])
	}
	for _, f := range m.src.Files() {
		fmt.Fprintf(h, "%s:%d:%d;", f.Path, f.Size, f.DataOffset)
	}
	fmt.Fprintf(h, "%+v|%d|%d|%d|%s|", m.cfg, m.opts.Layers, m.opts.Weights, m.kvType, m.b.Caps().Name)
	putInt(len(in.IDs))
	for i, id := range in.IDs {
		putInt(int(id))
		putInt(in.Positions[i][0])
		putInt(in.Positions[i][1])
		putInt(in.Positions[i][2])
	}
	putInt(len(in.Tags))
	for _, t := range in.Tags {
		putInt(int(t))
	}
	putInt(len(in.Items))
	for _, it := range in.Items {
		putInt(it.Height)
		putInt(it.Width)
		putInt(it.Pool.Temporal)
		putInt(it.Pool.Spatial)
		putInt(len(it.Frames))
		for _, f := range it.Frames {
			b := make([]byte, 4*len(f))
			for i, v := range f {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
			}
			h.Write(b)
		}
	}
	var k Key
	h.Sum(k[:0])
	return k
}

// Cache keeps recent encoder outputs so that re-rendering the same prompt
// and references (another seed, another step count) skips the encoder. It
// outlives Models (each phase closes its model) and is safe for concurrent
// use. Cached outputs are shared: callers must not modify them.
type Cache struct {
	mu    sync.Mutex
	max   int
	order []Key
	items map[Key]*Output
}

// NewCache keeps at most size outputs (least recently stored evicted first).
func NewCache(size int) *Cache {
	return &Cache{max: max(1, size), items: map[Key]*Output{}}
}

// Get returns a cached output.
func (c *Cache) Get(k Key) (*Output, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	o, ok := c.items[k]
	return o, ok
}

// Put stores an output.
func (c *Cache) Put(k Key, o *Output) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[k]; !ok {
		c.order = append(c.order, k)
	}
	c.items[k] = o
	for len(c.order) > c.max {
		delete(c.items, c.order[0])
		c.order = c.order[1:]
	}
}

// EncodeCached returns the cached output for in when there is one (hit is
// true, nothing is loaded or run), else encodes and stores the result.
func (m *Model) EncodeCached(ctx context.Context, in Input, c *Cache) (out *Output, hit bool, err error) {
	k := m.Key(in)
	if o, ok := c.Get(k); ok {
		return o, true, nil
	}
	out, err = m.Encode(ctx, in)
	if err != nil {
		return nil, false, err
	}
	c.Put(k, out)
	return out, false, nil
}
