package dit

import (
	"fmt"
	"math"
	"sort"

	"h3studio/engine/ggml"
	"h3studio/engine/layout"
)

// Condition timesteps of the release: visual conditions (keyframes,
// reference images and clips) at max(t_video, 0.999), reference audio at
// max(t_audio, 1.0) — the same rule in ComfyUI and SGLang's timestep plan.
const (
	VisualCondTimestep = 0.999
	AudioCondTimestep  = 1.0
)

// Timesteps are one forward's stream timesteps, t = 1 − σ (not ×1000).
// Text rows use the video timestep.
type Timesteps struct {
	Video, Audio float64
}

// of returns the timestep of a row role.
func (ts Timesteps) of(r layout.TimestepRole) float64 {
	switch r {
	case layout.TimestepAudio:
		return ts.Audio
	case layout.TimestepVisualCond:
		return math.Max(ts.Video, VisualCondTimestep)
	case layout.TimestepAudioCond:
		return math.Max(ts.Audio, AudioCondTimestep)
	}
	return ts.Video
}

type pairKey struct {
	t   float64
	tag layout.Modality
}

// adaTables are the precomputed modulations: per block [hidden, P, 6]
// (P (timestep, modality) pairs, slots shift/1+scale/gate for attention
// then MLP) and for the final layer [hidden, T, 2] (shift, 1+scale) per
// distinct timestep.
type adaTables struct {
	ws     *ggml.WeightSet
	blocks []*ggml.Tensor
	final  *ggml.Tensor
	pairs  map[pairKey]int // pair -> its index in order
	order  []pairKey       // the pairs in table order
	ts     []float64       // distinct timesteps, ascending; index = final-table row
	gate   []float64
}

// stepPairs lists the (timestep, modality) pairs one forward can use.
func stepPairs(ts Timesteps) []pairKey {
	return []pairKey{
		{ts.of(layout.TimestepVideo), layout.ModalityVideo},
		{ts.of(layout.TimestepVideo), layout.ModalityText},
		{ts.of(layout.TimestepAudio), layout.ModalityAudio},
		{ts.of(layout.TimestepVisualCond), layout.ModalityVideo},
		{ts.of(layout.TimestepAudioCond), layout.ModalityAudio},
	}
}

// PrepareAdaLN computes the modulation tables for every forward of a run
// (one Timesteps per step) and releases nothing but reads each block's
// adaln_proj from the checkpoint only while its table is made, so the 13B
// AdaLN weights are never resident. Call it again for a new schedule.
func (m *Model) PrepareAdaLN(steps []Timesteps) error {
	c := m.Cfg
	at, err := schedulePairs(steps)
	if err != nil {
		return err
	}
	emb, err := m.timeEmbedding(at.ts)
	if err != nil {
		return err
	}
	nt := len(at.ts)
	hostBlocks := make([][]float32, c.Layers)
	at.gate = make([]float64, c.Layers)
	for i := range c.Layers {
		raw, err := m.adaProject(fmt.Sprintf("blocks.%d.", i), emb, nt)
		if err != nil {
			return err
		}
		if i == 0 {
			m.Tap.Host("blk.0.adaln", raw, nt, len(raw)/nt)
		}
		hostBlocks[i], at.gate[i] = at.blockTable(raw, c.Hidden)
	}
	raw, err := m.adaProject("final_layer.", emb, nt)
	if err != nil {
		return err
	}
	if err := m.uploadTables(at, hostBlocks, finalTable(raw, nt, c.Hidden)); err != nil {
		return err
	}
	if m.ada != nil {
		m.ada.ws.Free()
	}
	m.ada = at
	m.reuse = coreReuse{cfg: m.reuse.cfg} // a new run: no stale residual
	return nil
}

// schedulePairs collects the (timestep, modality) pairs and the distinct
// timesteps (ascending) a schedule's forwards use.
func schedulePairs(steps []Timesteps) (*adaTables, error) {
	if len(steps) == 0 {
		return nil, fmt.Errorf("dit: PrepareAdaLN needs at least one step")
	}
	at := &adaTables{pairs: map[pairKey]int{}}
	tset := map[float64]bool{}
	for _, s := range steps {
		for _, p := range stepPairs(s) {
			if p.t < 0 || p.t > 1 || math.IsNaN(p.t) {
				return nil, fmt.Errorf("dit: timestep %g is outside [0, 1]", p.t)
			}
			if _, ok := at.pairs[p]; !ok {
				at.pairs[p] = len(at.order)
				at.order = append(at.order, p)
			}
			tset[p.t] = true
		}
	}
	for t := range tset {
		at.ts = append(at.ts, t)
	}
	sort.Float64s(at.ts)
	return at, nil
}

// blockTable lays one block's projected embeddings raw [timesteps][6][modalities][hidden]
// out as its table [6][pairs][hidden] with the scales as 1 + scale, and
// returns it with the block's mean |gate| (the thinning score).
func (a *adaTables) blockTable(raw []float32, h int) ([]float32, float64) {
	np := len(a.order)
	tab := make([]float32, h*np*adaSlots)
	var gsum float64
	for p, pk := range a.order {
		src := raw[a.timeRow(pk.t)*adaSlots*Modalities*h+int(pk.tag)*adaSlots*h:]
		for j := range adaSlots {
			dst := tab[(j*np+p)*h : (j*np+p+1)*h]
			copy(dst, src[j*h:(j+1)*h])
			if j == ScaleMSA || j == ScaleMLP {
				for k := range dst {
					dst[k]++
				}
			}
			if j == GateMSA || j == GateMLP {
				for _, v := range dst {
					gsum += math.Abs(float64(v))
				}
			}
		}
	}
	return tab, gsum / float64(2*np*h)
}

// finalTable lays the final layer's projections raw [timesteps][2][hidden]
// out as [2][timesteps][hidden]: shifts, then 1 + scale.
func finalTable(raw []float32, nt, h int) []float32 {
	final := make([]float32, h*nt*2)
	for q := range nt {
		copy(final[q*h:(q+1)*h], raw[q*2*h:q*2*h+h])
		for k := range h {
			final[(nt+q)*h+k] = raw[q*2*h+h+k] + 1
		}
	}
	return final
}

// uploadTables places the host tables in one backend weight set.
func (m *Model) uploadTables(at *adaTables, blocks [][]float32, final []float32) error {
	h, np, nt := m.Cfg.Hidden, len(at.order), len(at.ts)
	at.ws = m.b.NewWeightSet(len(blocks) + 1)
	for i := range blocks {
		at.blocks = append(at.blocks, at.ws.Add(fmt.Sprintf("adaln.%d", i), m.opt.AdaLNType, h, np, adaSlots))
	}
	at.final = at.ws.Add("adaln.final", ggml.F32, h, nt, 2)
	if err := at.ws.Alloc(); err != nil {
		return err
	}
	for i, t := range at.blocks {
		t.SetF32(blocks[i])
	}
	at.final.SetF32(final)
	return nil
}

// GateScores is each block's mean |gate_msa|, |gate_mlp| over the prepared
// tables: the ranking layer thinning uses (sampler.ThinningConfig).
func (m *Model) GateScores() []float64 {
	if m.ada == nil {
		return nil
	}
	return append([]float64(nil), m.ada.gate...)
}

// sinusoid is the [cos | sin] timestep embedding input, computed in
// float32 steps as the reference does.
func sinusoid(t float64, dim int) []float32 {
	half := dim / 2
	out := make([]float32, dim)
	lg := float32(-math.Log(10000))
	for i := 0; i < half; i++ {
		f := float32(math.Exp(float64(lg * float32(i) / float32(half))))
		a := float64(float32(t) * f)
		out[i] = float32(math.Cos(a))
		out[half+i] = float32(math.Sin(a))
	}
	return out
}

// timeEmbedding returns silu(time_embedder(t)) for each t, [len(ts)][time_dim].
func (m *Model) timeEmbedding(ts []float64) ([]float32, error) {
	c := m.Cfg
	var te TimeEmbedder
	wm, err := m.load(&te, "")
	if err != nil {
		return nil, err
	}
	defer wm.Free()
	g := m.b.NewGraph(0)
	defer g.Free()
	mark, deliver := m.tapper(g)
	in := make([]float32, 0, len(ts)*c.TimestepDim)
	for _, t := range ts {
		in = append(in, sinusoid(t, c.TimestepDim)...)
	}
	x := g.Input("sinusoid", ggml.F32, c.TimestepDim, len(ts))
	x.SetF32(in)
	e := linear(g, te.Out, te.OutB, g.SiLU(linear(g, te.In, te.InB, x)))
	mark("t_emb", e)
	s := g.SiLU(e)
	g.Output(s)
	if err := m.compute("time embedding", g); err != nil {
		return nil, err
	}
	deliver()
	return s.F32(), nil
}

// adaProject reads prefix+adaln_proj from the checkpoint, applies it to the
// (already SiLU'd) embeddings and frees it again.
func (m *Model) adaProject(prefix string, emb []float32, nt int) ([]float32, error) {
	var a AdaLN
	wm, err := m.load(&a, prefix)
	if err != nil {
		return nil, err
	}
	defer wm.Free()
	g := m.b.NewGraph(0)
	defer g.Free()
	x := g.Input("t_emb", ggml.F32, m.Cfg.TimeDim, nt)
	x.SetF32(emb)
	y, err := m.adaUpdate(g, prefix, x, linear(g, a.W, a.B, x))
	if err != nil {
		return nil, err
	}
	g.Output(y)
	if err := m.compute(prefix+"adaln", g); err != nil {
		return nil, err
	}
	return y.F32(), nil
}
