package ggml

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// seedPoolLen is the length of the seeded pool FillSeeded draws from: 16 MiB
// of f32 on the device, small next to any release-size weight set, and long
// enough that chunk offsets spread over millions of distinct values.
const seedPoolLen = 1 << 22

// seedChunkLen bounds the elements one copy node writes; offsets into the
// pool are drawn from the remaining seedPoolLen-seedChunkLen positions.
const seedChunkLen = seedPoolLen / 2

// Init is the distribution FillSeeded gives one weight: mean + std·u with
// u uniform of unit variance.
type Init struct{ Mean, Std float32 }

// FillSeeded writes seeded pseudo-random values into every weight of an
// allocated set, computed on the set's own device: a pool of seedPoolLen
// uniform values is uploaded once, and each weight is filled by graph copies
// of scaled pool windows, converted to its dtype (bf16, f16, q8_0, ... as
// ggml's copy quantises) where it lives. So release-size synthetic models
// (a 38 GB DiT core) cost neither host memory nor disk nor a host→device
// stream, and the same seed gives the same values on every backend.
// init picks each weight's distribution. Sets placed over host memory are
// read-only and refused.
func (ws *WeightSet) FillSeeded(seed uint64, init func(t *Tensor) Init) error {
	if !ws.allocated() {
		return fmt.Errorf("ggml: fill seeded: weight set not allocated")
	}
	if ws.readOnly {
		return fmt.Errorf("ggml: fill seeded: weights placed over host memory are read-only")
	}
	pool := ws.b.NewWeightSet(1)
	defer pool.Free()
	p := pool.Add("seed.pool", F32, seedPoolLen)
	if err := pool.Alloc(); err != nil {
		return fmt.Errorf("ggml: fill seeded: %w", err)
	}
	p.SetF32(SeedPool(seed))
	for _, t := range ws.tensors {
		if err := fillOne(ws.b, p, t, seed, init(t)); err != nil {
			return err
		}
	}
	return nil
}

// SeedPool is the pool FillSeeded uploads for seed (exported so tests and
// host references can recompute any filled value: see SeedWindows).
func SeedPool(seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	a := float32(math.Sqrt(3))
	v := make([]float32, seedPoolLen)
	for i := range v {
		v[i] = a * (2*r.Float32() - 1)
	}
	return v
}

// SeedWindow is one chunk of a filled weight: rows [Row, Row+Rows) hold
// pool[Offset:] scaled.
type SeedWindow struct{ Row, Rows, Offset int }

// SeedWindows lists how FillSeeded covers a weight named name with rows
// rows of n elements: chunks of whole rows, each copied from a pool offset
// drawn from (seed, name, chunk), a multiple of 64 elements so every
// backend reads aligned windows.
func SeedWindows(seed uint64, name string, n, rows int) ([]SeedWindow, error) {
	if n > seedChunkLen {
		return nil, fmt.Errorf("ggml: fill seeded %s: rows of %d elements exceed the %d-element chunk", name, n, seedChunkLen)
	}
	per := max(1, seedChunkLen/n)
	var out []SeedWindow
	for r, c := 0, uint64(0); r < rows; r, c = r+per, c+1 {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s/%d", seed, name, c)
		span := seedPoolLen - per*n
		off := int(h.Sum64()%uint64(span/64+1)) * 64
		out = append(out, SeedWindow{Row: r, Rows: min(per, rows-r), Offset: off})
	}
	return out, nil
}

// fillOne fills weight t in one graph of scaled pool windows.
func fillOne(b *Backend, pool, t *Tensor, seed uint64, in Init) error {
	if !t.Contiguous() {
		return fmt.Errorf("ggml: fill seeded: %s is not contiguous", t)
	}
	n := t.Ne(0)
	rows := t.Elements() / n
	wins, err := SeedWindows(seed, t.Name(), n, rows)
	if err != nil {
		return err
	}
	g := b.NewGraph(8*len(wins) + 8)
	defer g.Free()
	var mean *Tensor
	if in.Mean != 0 {
		mean = g.Input("seed.mean", F32, 1)
		mean.SetF32([]float32{in.Mean})
	}
	rowBytes := t.dt.RowBytes(n)
	for _, w := range wins {
		src := g.View(pool, 4*w.Offset, []int{n, w.Rows}, nil)
		v := g.Scale(src, in.Std)
		if mean != nil {
			v = g.Add(v, mean)
		}
		dst := g.View(t, w.Row*rowBytes, []int{n, w.Rows}, nil)
		g.Output(g.Cpy(v, dst))
	}
	if err := g.Compute(); err != nil {
		return fmt.Errorf("ggml: fill seeded %s: %w", t, err)
	}
	return nil
}
