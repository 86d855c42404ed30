package textenc

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"h3studio/engine/ggml"
	"h3studio/engine/plan"
	"h3studio/engine/weights"
)

// PrefillBench runs the production language-layer prefill (runText: row
// groups, a K/V pass and a query pass per layer, rows kept on the host
// between layers) over seeded synthetic weights generated on the device
// (ggml.WeightSet.FillSeeded): the release's 50 layers at 10k-100k tokens
// without the 64 GB checkpoint. The prompt is text only, so the mRoPE
// positions are (i, i, i).
type PrefillBench struct {
	m    *Model
	sets []*ggml.WeightSet
}

// NewPrefillBench places layers language layers of cfg with matrices
// stored as dt (BF16, F16 or Q8_0; norms F32), uniform with std
// 1/√fan_in (norm gains 1 ± 0.1), seeded by seed. o's Layers and Weights
// are ignored; its other fields apply as they do to New.
func NewPrefillBench(b *ggml.Backend, cfg Config, layers int, dt ggml.DType, seed uint64, o Options) (*PrefillBench, error) {
	o.Layers, o.Residency = layers, plan.Resident
	m, err := newModel(b, cfg, o)
	if err != nil {
		return nil, err
	}
	pb := &PrefillBench{m: m}
	shapes := textShapes(cfg.Text)
	for i := range m.layers {
		s := &layerSlot{}
		ws := b.NewWeightSet(len(shapes))
		pb.sets = append(pb.sets, ws)
		for _, n := range weights.Fields("", &s.l) {
			t := dt
			if len(shapes[n]) == 1 {
				t = ggml.F32
			}
			ws.Add(n, t, shapes[n]...)
		}
		err := ws.Alloc()
		if err == nil {
			err = ws.FillSeeded(seed+uint64(i), func(t *ggml.Tensor) ggml.Init {
				if t.Ne(1) == 1 {
					return ggml.Init{Mean: 1, Std: 0.1}
				}
				return ggml.Init{Std: float32(1 / math.Sqrt(float64(t.Ne(0))))}
			})
		}
		if err == nil {
			err = weights.Bind(ws, "", &s.l)
		}
		if err != nil {
			pb.Close()
			return nil, fmt.Errorf("textenc: prefill bench layer %d: %w", i, err)
		}
		s.ws = weights.ModuleOf(ws)
		m.layers[i] = s
	}
	return pb, nil
}

// Close frees the layers.
func (pb *PrefillBench) Close() {
	for _, ws := range pb.sets {
		ws.Free()
	}
	pb.sets = nil
}

// Bytes is the layers' weight memory.
func (pb *PrefillBench) Bytes() int {
	n := 0
	for _, ws := range pb.sets {
		n += ws.Size()
	}
	return n
}

// Flops is the multiply-adds x2 of the prefill over tokens tokens: the
// projections and MLP, and causal attention (half of the S² score and
// value products).
func (pb *PrefillBench) Flops(tokens int) float64 {
	c := pb.m.cfg.Text
	S, D, hd := float64(tokens), float64(c.Hidden), float64(c.HeadDim)
	q, kv := float64(c.Heads)*hd, float64(c.KVHeads)*hd
	linear := 2 * S * (D*q*2 + D*kv*2 + 3*D*float64(c.Intermediate))
	attn := 2 * S * S * q
	return float64(len(pb.sets)) * (linear + attn)
}

// Run prefills tokens random rows through every layer once and returns the
// wall time.
func (pb *PrefillBench) Run(ctx context.Context, tokens int) (time.Duration, error) {
	if tokens < 1 {
		return 0, fmt.Errorf("textenc: prefill of %d tokens", tokens)
	}
	D := pb.m.cfg.Text.Hidden
	// A seeded block of unit-variance rows, tiled: drawing 500 M normal
	// values for a 100k-token prompt would take longer than the prefill.
	r := rand.New(rand.NewPCG(3, 3))
	block := make([]float32, 1<<20)
	for i := range block {
		block[i] = float32(r.NormFloat64())
	}
	x := make([]float32, tokens*D)
	for i := 0; i < len(x); i += len(block) - 1 {
		copy(x[i:], block)
	}
	var pos positions
	for a := range pos {
		pos[a] = make([]int32, tokens)
		for i := range pos[a] {
			pos[a][i] = int32(i)
		}
	}
	start := time.Now()
	err := pb.m.runText(ctx, x, pos, nil, nil)
	return time.Since(start), err
}
