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
	pairs  map[pairKey]int
	ts     []float64 // distinct timesteps, ascending; index = final-table row
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
	if len(steps) == 0 {
		return fmt.Errorf("dit: PrepareAdaLN needs at least one step")
	}
	c := m.Cfg
	at := &adaTables{pairs: map[pairKey]int{}}
	var pairs []pairKey
	tset := map[float64]bool{}
	for _, s := range steps {
		for _, p := range stepPairs(s) {
			if p.t < 0 || p.t > 1 || math.IsNaN(p.t) {
				return fmt.Errorf("dit: timestep %g is outside [0, 1]", p.t)
			}
			if _, ok := at.pairs[p]; !ok {
				at.pairs[p] = len(pairs)
				pairs = append(pairs, p)
			}
			tset[p.t] = true
		}
	}
	for t := range tset {
		at.ts = append(at.ts, t)
	}
	sort.Float64s(at.ts)
	tIndex := map[float64]int{}
	for i, t := range at.ts {
		tIndex[t] = i
	}
	emb, err := m.timeEmbedding(at.ts)
	if err != nil {
		return err
	}
	h, nt, np := c.Hidden, len(at.ts), len(pairs)
	hostBlocks := make([][]float32, c.Layers)
	at.gate = make([]float64, c.Layers)
	for i := 0; i < c.Layers; i++ {
		raw, err := m.adaProject(fmt.Sprintf("blocks.%d.", i), emb, nt)
		if err != nil {
			return err
		}
		if i == 0 && m.Tap != nil {
			m.Tap("blk.0.adaln", []int{nt, len(raw) / nt}, raw)
		}
		tab := make([]float32, h*np*adaSlots)
		var gsum float64
		for p, pk := range pairs {
			src := raw[tIndex[pk.t]*adaSlots*Modalities*h+int(pk.tag)*adaSlots*h:]
			for j := 0; j < adaSlots; j++ {
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
		at.gate[i] = gsum / float64(2*np*h)
		hostBlocks[i] = tab
	}
	raw, err := m.adaProject("final_layer.", emb, nt)
	if err != nil {
		return err
	}
	final := make([]float32, h*nt*2)
	for q := 0; q < nt; q++ {
		copy(final[q*h:(q+1)*h], raw[q*2*h:q*2*h+h]) // shift
		for k := 0; k < h; k++ {
			final[(nt+q)*h+k] = raw[q*2*h+h+k] + 1 // 1 + scale
		}
	}
	at.ws = m.b.NewWeightSet(c.Layers + 1)
	for i := 0; i < c.Layers; i++ {
		at.blocks = append(at.blocks, at.ws.Add(fmt.Sprintf("adaln.%d", i), m.opt.AdaLNType, h, np, adaSlots))
	}
	at.final = at.ws.Add("adaln.final", ggml.F32, h, nt, 2)
	if err := at.ws.Alloc(); err != nil {
		return err
	}
	for i, t := range at.blocks {
		t.SetF32(hostBlocks[i])
	}
	at.final.SetF32(final)
	if m.ada != nil {
		m.ada.ws.Free()
	}
	m.ada = at
	m.reuse = coreReuse{cfg: m.reuse.cfg} // a new run: no stale residual
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
	y := linear(g, a.W, a.B, x)
	g.Output(y)
	if err := m.compute(prefix+"adaln", g); err != nil {
		return nil, err
	}
	return y.F32(), nil
}
