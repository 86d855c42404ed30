package dit

import (
	"fmt"

	"h3studio/engine/ggml"
)

// CoreReuseConfig is core residual reuse (h3.c --core-reuse k, not part of
// the release): the blocks run on the first forward of a run, on every
// Every-th forward and on the last; in between, the hidden state entering
// the heads is the fresh embedding of the current latents plus the blocks'
// residual (output − input) cached from the last full forward. Patch
// projections and heads see every step; the expensive core runs 1/Every of
// the time. It cannot be combined with sampler velocity reuse.
type CoreReuseConfig struct {
	Every int // 0 or 1: off
}

// MaxCoreReuse is the largest interval h3.c accepts; above it the cached
// residual is too stale to be useful even as a preview.
const MaxCoreReuse = 6

type coreReuse struct {
	cfg      CoreReuseConfig
	seq      *Sequence
	residual []float32
	count    int
}

// SetCoreReuse turns core reuse on (Every 2..6) or off and forgets any
// cached residual.
func (m *Model) SetCoreReuse(c CoreReuseConfig) error {
	if c.Every < 0 || c.Every > MaxCoreReuse {
		return fmt.Errorf("dit: core reuse interval %d is out of range; use 1 to %d", c.Every, MaxCoreReuse)
	}
	m.reuse = coreReuse{cfg: c}
	return nil
}

func (r *coreReuse) enabled() bool { return r.cfg.Every > 1 }

// cached returns the residual to reuse for this forward, or nil when the
// blocks must run (and counts the forward either way).
func (r *coreReuse) cached(s *Sequence, final bool) []float32 {
	if !r.enabled() {
		return nil
	}
	n := r.count
	r.count++
	if r.residual == nil || r.seq != s || final || n%r.cfg.Every == 0 {
		return nil
	}
	return r.residual
}

func (r *coreReuse) store(s *Sequence, res []float32) {
	if r.enabled() {
		r.seq, r.residual = s, res
	}
}

// replay is the residual in: the fresh embedding x [hidden, rows] plus the
// cached residual, in place of the blocks.
func (r *coreReuse) replay(g *ggml.Graph, x *ggml.Tensor, residual []float32) *ggml.Tensor {
	res := g.Input("core_residual", ggml.F32, x.Ne(0), x.Ne(1))
	res.SetF32(residual)
	return g.Add(x, res)
}

// reuseRecord is the residual out: the policy of a forward whose blocks
// run, wrapping all of them, that caches output − input for the replays.
type reuseRecord struct {
	reuse *coreReuse
	seq   *Sequence
	in    *carried
}

func (r *reuseRecord) wraps(int) bool { return true }

func (r *reuseRecord) enter(f *flow) { r.in = f.keep("core_in", f.x) }

func (r *reuseRecord) exit(f *flow) {
	res := f.g.Sub(f.x, r.in.in(f.g))
	f.g.Output(res)
	f.done = append(f.done, func() { r.reuse.store(r.seq, res.F32()) })
}
