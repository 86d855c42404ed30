package dit

import (
	"errors"
	"fmt"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// Inputs are one forward's host data, row-major.
type Inputs struct {
	Text  []float32 // refined text rows × hidden (EncodeText), fixed per generation
	Video []float32 // every video-kind row in sequence order × video patch width (conditions included)
	Audio []float32 // every audio-kind row in sequence order × audio channels
	T     Timesteps
	// Step is the forward's index in the run and Final marks its last
	// forward (token reduction and core reuse depend on them).
	Step  int
	Final bool
}

// Outputs are the data-ward velocities of the target rows, row-major:
// target video rows × video patch width, target audio rows × audio channels.
type Outputs struct {
	Video, Audio []float32
}

// graphInputs are the per-forward tables every block graph reads.
type graphInputs struct {
	idx      *ggml.Tensor // i32 [rows]: (timestep, modality) pair per row
	cos, sin *ggml.Tensor // [rope_dims/2, 1, rows]
}

func (m *Model) declareInputs(g *ggml.Graph, name string, idx []int32, cos, sin []float32) graphInputs {
	half, rows := 3*m.Cfg.RopeFreqs, len(idx)
	gi := graphInputs{
		idx: g.Input(name+"mod_index", ggml.I32, rows),
		cos: g.Input(name+"rope_cos", ggml.F32, half, 1, rows),
		sin: g.Input(name+"rope_sin", ggml.F32, half, 1, rows),
	}
	gi.idx.SetI32(idx)
	gi.cos.SetF32(cos)
	gi.sin.SetF32(sin)
	return gi
}

// Forward runs the DiT once and returns the target rows' velocities.
func (m *Model) Forward(s *Sequence, in Inputs) (*Outputs, error) {
	c := m.Cfg
	if m.ada == nil {
		return nil, errors.New("dit: Forward before PrepareAdaLN")
	}
	switch {
	case len(in.Text) != s.text*c.Hidden:
		return nil, fmt.Errorf("dit: %d text values for %d rows of %d", len(in.Text), s.text, c.Hidden)
	case len(in.Video) != s.video*c.VideoPatchDim():
		return nil, fmt.Errorf("dit: %d video values for %d rows of %d", len(in.Video), s.video, c.VideoPatchDim())
	case len(in.Audio) != s.audio*c.AudioChannels:
		return nil, fmt.Errorf("dit: %d audio values for %d rows of %d", len(in.Audio), s.audio, c.AudioChannels)
	}
	idx, err := s.modIndex(m.ada, in.T)
	if err != nil {
		return nil, err
	}
	if r := m.reuse.cached(s, in.Final); r != nil {
		out, _, _, err := m.forwardGraph(s, in, idx, fwdPlan{embed: true, residualIn: r, heads: true})
		return out, err
	}
	active := m.activeList()
	keep := m.reuse.enabled()
	if !m.streamed() {
		if err := m.residentBlocks(); err != nil {
			return nil, err
		}
		plan := fwdPlan{embed: true, blocks: active, cores: m.blocks, residualOut: keep, heads: true}
		if b, e, ok := m.reductionSpan(in.Step); ok {
			plan.pool, plan.begin, plan.end = s.pooledGrid(), b, e
		}
		out, _, res, err := m.forwardGraph(s, in, idx, plan)
		if err == nil {
			m.reuse.store(s, res)
		}
		return out, err
	}
	return m.forwardStreamed(s, in, idx, active, keep)
}

// forwardStreamed embeds, runs one graph per block with the next block's
// weights copying into the other slot meanwhile, then runs the heads; the
// hidden state (and token reduction's pooling) passes through the host.
func (m *Model) forwardStreamed(s *Sequence, in Inputs, idx []int32, active []int, keep bool) (*Outputs, error) {
	c := m.Cfg
	st, err := m.streamer(active)
	if err != nil {
		return nil, err
	}
	_, x, _, err := m.forwardGraph(s, in, idx, fwdPlan{embed: true})
	if err != nil {
		return nil, err
	}
	x0 := x
	cores := make([]Core, m.Cfg.Layers)
	begin, end, reduce := m.reductionSpan(in.Step)
	var ps *pooledSeq
	var orig, base []float32
	inPool := false
	if reduce {
		ps = s.pooledGrid()
	}
	st.Prefetch(0)
	for j, i := range active {
		if reduce && !inPool && i >= begin && i < end {
			orig, x, inPool = x, ps.poolHost(x, c.Hidden), true
			base = x
		}
		if inPool && i >= end {
			x, inPool = ps.restoreHost(orig, base, x, c.Hidden, m.reduce.Scale), false
		}
		if j+1 < len(active) {
			st.Prefetch(j + 1) // its slot held block j-1, whose graph has finished
		}
		ws, err := st.Wait(j)
		if err != nil {
			return nil, fmt.Errorf("dit: %w", err)
		}
		if err := weights.Bind(ws, "", &cores[i]); err != nil {
			return nil, fmt.Errorf("dit: %w", err)
		}
		plan := fwdPlan{x0: x, blocks: []int{i}, cores: cores, pool: ps, begin: begin, end: end, pooledIn: inPool}
		if _, x, _, err = m.forwardGraph(s, in, idx, plan); err != nil {
			return nil, err
		}
	}
	if inPool {
		x = ps.restoreHost(orig, base, x, c.Hidden, m.reduce.Scale)
	}
	if keep {
		res := make([]float32, len(x))
		for i := range res {
			res[i] = x[i] - x0[i]
		}
		m.reuse.store(s, res)
	}
	out, _, _, err := m.forwardGraph(s, in, idx, fwdPlan{x0: x, heads: true})
	return out, err
}

// fwdPlan says what one graph does: embed the inputs (else start from the
// host hidden state x0), optionally add a cached core residual, run blocks,
// optionally return the blocks' residual, and run the heads (else return
// the hidden state).
type fwdPlan struct {
	embed       bool
	x0          []float32
	residualIn  []float32
	blocks      []int
	cores       []Core
	residualOut bool
	heads       bool
	// Token reduction: pool before block begin, restore before block end
	// (or after the last block); pooledIn says x0 is already pooled (a
	// streamed block inside the pooled stretch).
	pool       *pooledSeq
	begin, end int
	pooledIn   bool
}

func (m *Model) forwardGraph(s *Sequence, in Inputs, idx []int32, p fwdPlan) (out *Outputs, hidden, residual []float32, err error) {
	c := m.Cfg
	g := m.b.NewGraph(0)
	defer g.Free()
	mark, deliver := m.tapper(g)
	var x *ggml.Tensor
	if p.embed {
		x = m.embed(g, s, in)
		mark("blk.in", x)
	} else {
		rows := s.rows
		if p.pooledIn {
			rows = p.pool.rows
		}
		x = g.Input("hidden", ggml.F32, c.Hidden, rows)
		x.SetF32(p.x0)
	}
	if p.residualIn != nil {
		r := g.Input("core_residual", ggml.F32, c.Hidden, s.rows)
		r.SetF32(p.residualIn)
		x = g.Add(x, r)
	}
	xin := x
	if len(p.blocks) > 0 {
		var full, pooled graphInputs
		var orig, base *ggml.Tensor
		inPool := p.pooledIn
		for _, i := range p.blocks {
			if p.pool != nil && !inPool && i >= p.begin && i < p.end {
				orig, x = x, p.pool.pool(g, x)
				base, inPool = x, true
			}
			if inPool && i >= p.end {
				x, inPool = p.pool.restore(g, orig, base, x, m.reduce.Scale), false
			}
			gi := &full
			if inPool {
				gi = &pooled
				if gi.idx == nil {
					*gi = m.declareInputs(g, "pooled_", p.pool.pooledIndex(idx), p.pool.cos, p.pool.sin)
				}
			} else if gi.idx == nil {
				*gi = m.declareInputs(g, "", idx, s.cos, s.sin)
			}
			mod := m.modulation(g, i, gi.idx)
			a := attnCtx{cfg: c, layout: m.qkv(), cos: gi.cos, sin: gi.sin, exact: m.exactKV(), name: fmt.Sprintf("blk.%d.attn", i)}
			x = p.cores[i].Forward(g, x, mod, a, mark)
			if !inPool {
				mark(fmt.Sprintf("blk.%d.out", i), x)
			}
		}
		if inPool && !p.pooledIn {
			x = p.pool.restore(g, orig, base, x, m.reduce.Scale)
		}
	}
	var vo, ao, res *ggml.Tensor
	if p.residualOut {
		res = g.Sub(x, xin)
		g.Output(res)
	}
	if p.heads {
		vo, ao = m.heads(g, s, x, in.T)
		mark("final.video", vo)
		mark("final.audio", ao)
		g.Output(vo, ao)
	} else {
		g.Output(x)
	}
	stage := fmt.Sprintf("forward (embed %v, blocks %v, heads %v)", p.embed, p.blocks, p.heads)
	if err := m.compute(stage, g); err != nil {
		return nil, nil, nil, err
	}
	deliver()
	if res != nil {
		residual = res.F32()
	}
	if p.heads {
		return &Outputs{Video: vo.F32(), Audio: ao.F32()}, nil, residual, nil
	}
	return nil, x.F32(), residual, nil
}

// embed projects the latent rows and lays [text | video rows | audio rows]
// out in sequence order: x [hidden, rows].
func (m *Model) embed(g *ggml.Graph, s *Sequence, in Inputs) *ggml.Tensor {
	c := m.Cfg
	all := g.Input("text", ggml.F32, c.Hidden, s.text)
	all.SetF32(in.Text)
	if s.video > 0 {
		v := g.Input("video_rows", ggml.F32, c.VideoPatchDim(), s.video)
		v.SetF32(in.Video)
		all = g.Concat(all, linear(g, m.top.VideoIn, m.top.VideoInB, v), 1)
	}
	if s.audio > 0 {
		a := g.Input("audio_rows", ggml.F32, c.AudioChannels, s.audio)
		a.SetF32(in.Audio)
		all = g.Concat(all, linear(g, m.top.AudioIn, m.top.AudioInB, a), 1)
	}
	order := g.Input("row_order", ggml.I32, s.rows)
	order.SetI32(s.order)
	return g.GetRows(all, order)
}

// modulation gathers block i's six AdaLN terms for every row.
func (m *Model) modulation(g *ggml.Graph, i int, idx *ggml.Tensor) Modulation {
	tab := m.ada.blocks[i]
	h, np := tab.Ne(0), tab.Ne(1)
	var mod Modulation
	for j := range mod {
		slot := g.View(tab, j*np*tab.Nb(1), []int{h, np}, nil)
		mod[j] = g.GetRows(slot, idx)
	}
	return mod
}

// heads applies the final AdaLN (indexed by timestep only) and the F32
// output heads to the target rows: video [patch, rows], audio [channels, rows].
func (m *Model) heads(g *ggml.Graph, s *Sequence, x *ggml.Tensor, ts Timesteps) (video, audio *ggml.Tensor) {
	c := m.Cfg
	head := func(start, rows int, t float64, w, b *ggml.Tensor) *ggml.Tensor {
		q := m.ada.timeRow(t)
		fin := m.ada.final
		nt, row := fin.Ne(1), fin.Nb(1)
		shift := g.View(fin, q*row, []int{c.Hidden, 1}, nil)
		scale := g.View(fin, (nt+q)*row, []int{c.Hidden, 1}, nil)
		xs := g.View(x, start*x.Nb(1), []int{c.Hidden, rows}, nil)
		h := g.Add(g.Mul(rmsNorm(g, g.Cont(xs), m.top.FinalNorm, c.FinalNormEps), scale), shift)
		return linear(g, w, b, h)
	}
	video = head(s.targetVideo.Start, s.targetVideo.Rows, ts.Video, m.top.VideoOut, m.top.VideoOutB)
	audio = head(s.targetAud.Start, s.targetAud.Rows, ts.Audio, m.top.AudioOut, m.top.AudioOutB)
	return video, audio
}

// timeRow is the final-table row of a prepared timestep.
func (a *adaTables) timeRow(t float64) int {
	for i, v := range a.ts {
		if v == t {
			return i
		}
	}
	panic(fmt.Sprintf("dit: timestep %g not prepared", t)) // modIndex checked every row's timestep first
}
