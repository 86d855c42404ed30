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
		return m.forwardReplay(s, in, idx, r)
	}
	pols := m.policies(s, idx, in.Step)
	if m.opt.Residency == Resident {
		if err := m.residentBlocks(); err != nil {
			return nil, err
		}
		return m.forwardResident(s, in, idx, pols)
	}
	return m.forwardStreamed(s, in, idx, pols)
}

// policies are the speed policies of one forward, outermost first: core
// reuse's residual spans the restored output of token reduction.
func (m *Model) policies(s *Sequence, idx []int32, step int) []policy {
	var pols []policy
	if m.reuse.enabled() {
		pols = append(pols, &reuseRecord{reuse: &m.reuse, seq: s})
	}
	if p := m.tokenReduction(s, idx, step); p != nil {
		pols = append(pols, p)
	}
	return pols
}

// forwardResident is one graph: embed, every active block, heads.
func (m *Model) forwardResident(s *Sequence, in Inputs, idx []int32, pols []policy) (*Outputs, error) {
	g := m.b.NewGraph(0)
	defer g.Free()
	f := m.newFlow(s, idx, pols, false)
	m.begin(f, g)
	f.x = m.embed(g, s, in)
	f.mark("blk.in", f.x)
	m.runBlocks(f, m.activeList(), true, m.blocks)
	return m.headsFlow("forward", f, s, in)
}

// forwardReplay is core reuse's cached forward: the fresh embedding plus
// the residual the blocks added last time, then the heads.
func (m *Model) forwardReplay(s *Sequence, in Inputs, idx []int32, residual []float32) (*Outputs, error) {
	g := m.b.NewGraph(0)
	defer g.Free()
	f := m.newFlow(s, idx, nil, false)
	m.begin(f, g)
	x := m.embed(g, s, in)
	f.mark("blk.in", x)
	f.x = m.reuse.replay(g, x, residual)
	return m.headsFlow("forward (core reused)", f, s, in)
}

// forwardStreamed runs one graph per block with the next block's weights
// copying into the other slot meanwhile; the hidden state (and what the
// policies keep) passes through the host between graphs.
func (m *Model) forwardStreamed(s *Sequence, in Inputs, idx []int32, pols []policy) (*Outputs, error) {
	active := m.activeList()
	st, err := m.streamer(active)
	if err != nil {
		return nil, err
	}
	f := m.newFlow(s, idx, pols, true)
	step := func(stage string, build func(g *ggml.Graph)) error {
		g := m.b.NewGraph(0)
		defer g.Free()
		m.begin(f, g)
		build(g)
		return m.computeFlow(stage, f)
	}
	err = step("embed", func(g *ggml.Graph) {
		f.x = m.embed(g, s, in)
		f.mark("blk.in", f.x)
	})
	if err != nil {
		return nil, err
	}
	cores := make([]Core, m.Cfg.Layers)
	st.Prefetch(0)
	for j, i := range active {
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
		last := j == len(active)-1
		if err := step(fmt.Sprintf("block %d", i), func(*ggml.Graph) { m.runBlocks(f, []int{i}, last, cores) }); err != nil {
			return nil, err
		}
	}
	g := m.b.NewGraph(0)
	defer g.Free()
	f.streamed = false // the heads graph is the last
	m.begin(f, g)
	return m.headsFlow("heads", f, s, in)
}

// headsFlow finishes f's graph with the heads and computes it.
func (m *Model) headsFlow(stage string, f *flow, s *Sequence, in Inputs) (*Outputs, error) {
	vo, ao := m.heads(f.g, s, f.x, in.T)
	f.mark("final.video", vo)
	f.mark("final.audio", ao)
	f.g.Output(vo, ao)
	if err := m.computeFlow(stage, f); err != nil {
		return nil, err
	}
	return &Outputs{Video: vo.F32(), Audio: ao.F32()}, nil
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
