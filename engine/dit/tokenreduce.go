package dit

import (
	"fmt"

	"h3studio/engine/ggml"
)

// TokenReductionConfig is h3.c's --token-reduction (not part of the
// release): blocks [Begin, End) run with the target video's horizontally
// adjacent row pairs averaged into one row (RoPE position = the pair's mean
// position); text, conditions, references and audio stay exact. On the
// way out every pooled video row gets its original value plus Scale times
// the update its pooled row received (delta restore); an unpaired last
// column and every other row take the pooled stream's value as is. During
// the first EarlySteps forwards of a run the pooled stretch lasts until
// EarlyEnd instead (coarse structure tolerates it while it forms).
type TokenReductionConfig struct {
	Begin, End           int
	EarlySteps, EarlyEnd int
	Scale                float64 // 0 means 1
}

// H3CTokenReduction is h3.c's setting for the 50-block release: blocks
// 4..29 pooled, 4..39 during the first 10 forwards.
func H3CTokenReduction() TokenReductionConfig {
	return TokenReductionConfig{Begin: 4, End: 30, EarlySteps: 10, EarlyEnd: 40, Scale: 1}
}

// SetTokenReduction turns token reduction on, or off with nil.
func (m *Model) SetTokenReduction(c *TokenReductionConfig) error {
	if c == nil {
		m.reduce = nil
		return nil
	}
	r := *c
	if r.Scale == 0 {
		r.Scale = 1
	}
	if r.EarlySteps == 0 {
		r.EarlyEnd = r.End
	}
	n := m.Cfg.Layers
	if r.Begin < 0 || r.Begin >= r.End || r.End > n || r.EarlyEnd < r.End || r.EarlyEnd > n || r.EarlySteps < 0 || r.Scale < 0 || r.Scale > 2 {
		return fmt.Errorf("dit: token reduction blocks %d..%d (early %d steps until %d, scale %g) do not fit %d blocks", r.Begin, r.End, r.EarlySteps, r.EarlyEnd, r.Scale, n)
	}
	m.reduce = &r
	return nil
}

// pooledSeq is a sequence with its target video pooled in horizontal pairs.
type pooledSeq struct {
	rows          int
	first, second []int32   // [pooled rows]: the full rows averaged (equal when not a pair)
	parent        []int32   // [full rows]: the pooled row each full row came from
	delta         []float32 // [full rows]: 1 where the row is restored by delta, else 0
	cos, sin      []float32
	modRow        []int32 // [pooled rows]: the full row whose AdaLN row it uses
}

// pooled returns (and caches) the sequence's pooled grid.
func (s *Sequence) pooledGrid() *pooledSeq {
	if s.pooled != nil {
		return s.pooled
	}
	v := s.targetVideo
	rw := (v.GridW + 1) / 2
	p := &pooledSeq{rows: v.Start + v.LatentT*v.GridH*rw, parent: make([]int32, s.rows), delta: make([]float32, s.rows)}
	for r := 0; r < v.Start; r++ {
		p.first = append(p.first, int32(r))
		p.parent[r] = int32(r)
	}
	p.second = append([]int32(nil), p.first...)
	for k := 0; k < v.LatentT*v.GridH; k++ {
		for x := 0; x < rw; x++ {
			a := v.Start + k*v.GridW + 2*x
			b := a
			if 2*x+1 < v.GridW {
				b = a + 1
			}
			pr := int32(len(p.first))
			p.first, p.second = append(p.first, int32(a)), append(p.second, int32(b))
			p.parent[a], p.parent[b] = pr, pr
			if a != b {
				p.delta[a], p.delta[b] = 1, 1
			}
		}
	}
	var full [][3]float64
	for i := range s.Segments {
		full = s.Segments[i].AppendPositions(full)
	}
	pos := make([][3]float64, p.rows)
	for i := range pos {
		a, b := full[p.first[i]], full[p.second[i]]
		pos[i] = [3]float64{(a[0] + b[0]) * 0.5, (a[1] + b[1]) * 0.5, (a[2] + b[2]) * 0.5}
	}
	p.cos, p.sin = ropeTables(pos, s.inv)
	p.modRow = p.first
	s.pooled = p
	return p
}

// tokenReduction is the policy of one forward: blocks [begin, end) run
// on the pooled grid.
type tokenReduction struct {
	p          *pooledSeq
	grid       *rowGrid
	begin, end int
	scale      float64
	orig, base *carried // the full rows entering the span and their pooled values
}

// tokenReduction returns the forward's policy, or nil when it is off.
func (m *Model) tokenReduction(s *Sequence, idx []int32, step int) *tokenReduction {
	r := m.reduce
	if r == nil {
		return nil
	}
	end := r.End
	if step < r.EarlySteps {
		end = r.EarlyEnd
	}
	p := s.pooledGrid()
	grid := &rowGrid{name: "pooled_", idx: p.pooledIndex(idx), cos: p.cos, sin: p.sin}
	return &tokenReduction{p: p, grid: grid, begin: r.Begin, end: end, scale: r.Scale}
}

func (t *tokenReduction) wraps(block int) bool { return block >= t.begin && block < t.end }

func (t *tokenReduction) enter(f *flow) {
	t.orig = f.keep("pool_orig", f.x)
	f.x = t.p.pool(f.g, f.x)
	t.base = f.keep("pool_base", f.x)
	f.grid = t.grid
}

func (t *tokenReduction) exit(f *flow) {
	f.x = t.p.restore(f.g, t.orig.in(f.g), t.base.in(f.g), f.x, t.scale)
	f.grid = f.full
}

// pool averages each pair of rows of x [hidden, rows] into the pooled grid.
func (p *pooledSeq) pool(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	a := g.Input("pool_first", ggml.I32, p.rows)
	b := g.Input("pool_second", ggml.I32, p.rows)
	a.SetI32(p.first)
	b.SetI32(p.second)
	return g.Scale(g.Add(g.GetRows(x, a), g.GetRows(x, b)), 0.5)
}

// restore expands the pooled stream xr back to every row: original +
// scale·(xr − baseline) for pooled pairs, xr as is elsewhere.
func (p *pooledSeq) restore(g *ggml.Graph, orig, baseline, xr *ggml.Tensor, scale float64) *ggml.Tensor {
	par := g.Input("pool_parent", ggml.I32, len(p.parent))
	par.SetI32(p.parent)
	mask := g.Input("pool_delta", ggml.F32, 1, len(p.delta))
	keep := g.Input("pool_plain", ggml.F32, 1, len(p.delta))
	inv := make([]float32, len(p.delta))
	for i, d := range p.delta {
		inv[i] = 1 - d
	}
	mask.SetF32(p.delta)
	keep.SetF32(inv)
	plain := g.GetRows(xr, par)
	upd := g.Add(orig, g.Scale(g.GetRows(g.Sub(xr, baseline), par), float32(scale)))
	return g.Add(g.Mul(plain, keep), g.Mul(upd, mask)) // each row takes exactly one of the two
}

// pooledIndex is the AdaLN pair of each pooled row.
func (p *pooledSeq) pooledIndex(full []int32) []int32 {
	out := make([]int32, p.rows)
	for i, r := range p.modRow {
		out[i] = full[r]
	}
	return out
}
