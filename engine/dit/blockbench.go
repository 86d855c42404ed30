package dit

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// BlockBench is one DiT block at any config with random weights in a
// given storage type: the real-scale shape, memory and throughput check
// (make bench, the long tests) that needs no 66 GB checkpoint.
type BlockBench struct {
	Cfg  *Config
	b    *ggml.Backend
	ws   *ggml.WeightSet
	core Core
	rng  *rand.Rand
}

// NewBlockBench uploads one block's core weights, random with the
// reference init's scale (1/√fan_in), stored as dt (F32, BF16, F16, Q8_0 or Q4_K).
func NewBlockBench(b *ggml.Backend, cfg *Config, dt ggml.DType, seed uint64) (*BlockBench, error) {
	bb := &BlockBench{Cfg: cfg, b: b, rng: rand.New(rand.NewPCG(seed, 7))}
	ns := weights.Fields("", &bb.core)
	bb.ws = b.NewWeightSet(len(ns))
	shapes := map[string][]int64{}
	for n, s := range cfg.ExpectedShapes() {
		if len(n) > 9 && n[:9] == "blocks.0." {
			shapes[n[9:]] = s
		}
	}
	var ts []*ggml.Tensor
	for _, n := range ns {
		s := shapes[n]
		t := dt
		if len(s) == 1 {
			t = ggml.F32
		}
		shape := make([]int, len(s))
		for i, d := range s {
			shape[len(s)-1-i] = int(d)
		}
		ts = append(ts, bb.ws.Add(n, t, shape...))
	}
	if err := bb.ws.Alloc(); err != nil {
		bb.ws.Free()
		return nil, err
	}
	for _, t := range ts {
		in := t.Ne(0)
		scale := float32(1 / math.Sqrt(float64(in)))
		if t.Ne(1) == 1 {
			scale = 0.2 // norm gains 1 ± 0.2
		}
		bb.fill(t, scale, t.Ne(1) == 1)
	}
	if err := weights.Bind(bb.ws, "", &bb.core); err != nil {
		return nil, err
	}
	return bb, nil
}

// fill writes uniform values of the given standard deviation, row by row
// so that no full-size float32 copy of a 150M-parameter matrix is made.
func (bb *BlockBench) fill(t *ggml.Tensor, std float32, gain bool) {
	n, rows := t.Ne(0), t.Elements()/t.Ne(0)
	a := std * float32(math.Sqrt(3))
	row := make([]float32, n)
	raw := make([]byte, 0, t.NBytes())
	for r := 0; r < rows; r++ {
		for i := range row {
			row[i] = a * (2*bb.rng.Float32() - 1)
			if gain {
				row[i]++
			}
		}
		switch t.DType() {
		case ggml.F32:
			for _, v := range row {
				raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
			}
		case ggml.BF16, ggml.F16:
			conv := ggml.F32ToBF16
			if t.DType() == ggml.F16 {
				conv = ggml.F32ToF16
			}
			for _, h := range conv(row) {
				raw = binary.LittleEndian.AppendUint16(raw, h)
			}
		default:
			raw = append(raw, ggml.Quantize(t.DType(), row, n)...)
		}
	}
	t.SetRaw(raw)
}

// Bytes is the block's weight memory.
func (bb *BlockBench) Bytes() int { return bb.ws.Size() }

// Close frees the weights.
func (bb *BlockBench) Close() { bb.ws.Free() }

// Flops is the multiply-add count ×2 of one block forward over rows.
func (bb *BlockBench) Flops(rows int) float64 {
	c := bb.Cfg
	h, in, f := float64(c.Hidden), float64(c.Inner()), float64(c.FFN)
	linear := 2 * float64(rows) * (h*3*in + in*h + h*2*f + f*h)
	return linear + 4*float64(rows)*float64(rows)*in
}

// Run builds and runs the block over rows random rows with random
// modulation (two timesteps' worth of table rows) and RoPE positions on a
// 2-D grid, and returns the output; inspect, when set, sees the graph.
func (bb *BlockBench) Run(rows int, inspect func(*ggml.Graph)) ([]float32, error) {
	c := bb.Cfg
	if rows < 1 {
		return nil, fmt.Errorf("dit: %d rows", rows)
	}
	g := bb.b.NewGraph(0)
	defer g.Free()
	h, pairs, half := c.Hidden, 4, 3*c.RopeFreqs
	rnd := func(n int, a, off float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = off + a*(2*bb.rng.Float32()-1)
		}
		return v
	}
	x := g.Input("x", ggml.F32, h, rows)
	x.SetF32(rnd(h*rows, 1, 0))
	tab := g.Input("table", ggml.F32, h, pairs, adaSlots)
	tab.SetF32(rnd(h*pairs*adaSlots, 0.5, 0))
	idx := g.Input("idx", ggml.I32, rows)
	iv := make([]int32, rows)
	for i := range iv {
		iv[i] = int32(i % pairs)
	}
	idx.SetI32(iv)
	var mod Modulation
	for j := range mod {
		mod[j] = g.GetRows(g.View(tab, j*pairs*tab.Nb(1), []int{h, pairs}, nil), idx)
	}
	cs, sn := make([]float32, 0, rows*half), make([]float32, 0, rows*half)
	inv := make([]float64, c.RopeFreqs)
	for k := range inv {
		inv[k] = math.Pow(10000, -float64(k)/float64(c.RopeFreqs))
	}
	side := int(math.Ceil(math.Sqrt(float64(rows))))
	for r := 0; r < rows; r++ {
		pos := [3]float64{float64(r / (side * side)), float64(r / side % side), float64(r % side)}
		for a := 0; a < 3; a++ {
			for k := range inv {
				cs = append(cs, float32(math.Cos(pos[a]*inv[k])))
				sn = append(sn, float32(math.Sin(pos[a]*inv[k])))
			}
		}
	}
	cos, sin := g.Input("cos", ggml.F32, half, 1, rows), g.Input("sin", ggml.F32, half, 1, rows)
	cos.SetF32(cs)
	sin.SetF32(sn)
	y := bb.core.Forward(g, x, mod, attnCtx{cfg: c, layout: qkvInterleaved, cos: cos, sin: sin, name: "bench"}, func(string, *ggml.Tensor) {})
	g.Output(y)
	if inspect != nil {
		inspect(g)
	}
	if err := g.Compute(); err != nil {
		return nil, err
	}
	return y.F32(), nil
}
