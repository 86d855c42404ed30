package dit

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// BlockBench is a stack of DiT blocks at any config with seeded synthetic
// weights in a given storage type: the real-scale shape, memory and
// throughput check (make bench, h3studio bench --dit, the long tests) that
// needs no 66 GB checkpoint. Its weights are generated where they live
// (ggml.WeightSet.FillSeeded), so 50 release blocks (38 GB in bf16) cost
// no host memory, disk or upload.
type BlockBench struct {
	Cfg   *Config
	b     *ggml.Backend
	ws    *ggml.WeightSet
	cores []Core
	// table is the modulation table, resident like Model's AdaLN tables:
	// as a graph input it would live on the host and pull every block's
	// six row gathers onto the CPU (602 scheduler splits on the H200).
	table *ggml.Tensor
	rng   *rand.Rand
	// lora, when placed (AddLoRA), holds each block's side-path factors;
	// sides are what graphs use (nil: the base alone, UseLoRA(false)).
	lora  *ggml.WeightSet
	kept  []coreSide
	sides []coreSide
}

// NewBlockBench places blocks blocks' core weights stored as dt (F32, BF16,
// F16, Q8_0 or Q4_K; norm gains stay F32), uniform with the reference
// init's scale (1/√fan_in; gains 1 ± 0.2), seeded by seed.
func NewBlockBench(b *ggml.Backend, cfg *Config, dt ggml.DType, blocks int, seed uint64) (*BlockBench, error) {
	if blocks < 1 {
		return nil, fmt.Errorf("dit: block bench of %d blocks", blocks)
	}
	bb := &BlockBench{Cfg: cfg, b: b, cores: make([]Core, blocks), rng: rand.New(rand.NewPCG(seed, 7))}
	ns := weights.Fields("", &bb.cores[0])
	bb.ws = b.NewWeightSet(blocks*len(ns) + 1)
	bb.table = bb.ws.Add("table", ggml.F32, cfg.Hidden, benchPairs, adaSlots)
	shapes := map[string][]int64{}
	for n, s := range cfg.Shapes() {
		if len(n) > 9 && n[:9] == "blocks.0." {
			shapes[n[9:]] = s
		}
	}
	for i := range bb.cores {
		for _, n := range ns {
			s := shapes[n]
			t := dt
			if len(s) == 1 {
				t = ggml.F32
			}
			shape := make([]int, len(s))
			for j, d := range s {
				shape[len(s)-1-j] = int(d)
			}
			bb.ws.Add(fmt.Sprintf("blocks.%d.%s", i, n), t, shape...)
		}
	}
	if err := bb.ws.Alloc(); err != nil {
		bb.ws.Free()
		return nil, err
	}
	err := bb.ws.FillSeeded(seed, func(t *ggml.Tensor) ggml.Init {
		if t == bb.table {
			return ggml.Init{Std: 0.29} // modulation terms within ±0.5
		}
		if t.Ne(1) == 1 {
			return ggml.Init{Mean: 1, Std: 0.2}
		}
		return ggml.Init{Std: float32(1 / math.Sqrt(float64(t.Ne(0))))}
	})
	for i := range bb.cores {
		err = errors.Join(err, weights.Bind(bb.ws, fmt.Sprintf("blocks.%d.", i), &bb.cores[i]))
	}
	if err != nil {
		bb.ws.Free()
		return nil, fmt.Errorf("dit: block bench: %w", err)
	}
	return bb, nil
}

// Blocks is the number of blocks a Run goes through.
func (bb *BlockBench) Blocks() int { return len(bb.cores) }

// Bytes is the stack's weight memory (the blocks', not the small table's).
func (bb *BlockBench) Bytes() int { return bb.ws.Size() - bb.table.NBytes() }

// Close frees the weights.
func (bb *BlockBench) Close() {
	bb.ws.Free()
	if bb.lora != nil {
		bb.lora.Free()
	}
}

// AddLoRA places a seeded rank-rank adapter on the four core linears of
// every block, stored as renders keep them (LoRAFactorType), applied at strength 1
// (alpha = rank), and switches it on. The fifth kind, adaln_proj, costs a
// forward nothing: its update is folded into the modulation tables.
func (bb *BlockBench) AddLoRA(rank int, seed uint64) error {
	if rank < 1 || bb.lora != nil {
		return fmt.Errorf("dit: block bench LoRA of rank %d (one per bench)", rank)
	}
	c := bb.Cfg
	h, in, f := c.Hidden, c.Inner(), c.FFN
	shapes := [][2]int{{h, 3 * in}, {in, h}, {h, 2 * f}, {f, h}} // [in, out] of qkv, out, fc1, fc2
	bb.lora = bb.b.NewWeightSet(8 * len(bb.cores))
	p := ggml.Precision{Weights: ggml.StoreAs(bb.cores[0].QKV.DType())} // as a render at the bench's weights keeps them
	type ab struct{ a, b *ggml.Tensor }
	all := make([][4]ab, len(bb.cores))
	for i := range bb.cores {
		for k, s := range shapes {
			all[i][k] = ab{bb.lora.Add(fmt.Sprintf("lora.%d.%d.A", i, k), LoRAFactorType(p, s[0]), s[0], rank),
				bb.lora.Add(fmt.Sprintf("lora.%d.%d.B", i, k), LoRAFactorType(p, rank), rank, s[1])}
		}
	}
	if err := bb.lora.Alloc(); err != nil {
		return err
	}
	err := bb.lora.FillSeeded(seed, func(t *ggml.Tensor) ggml.Init {
		return ggml.Init{Std: float32(0.1 / math.Sqrt(float64(t.Ne(0))))}
	})
	if err != nil {
		return err
	}
	bb.kept = make([]coreSide, len(bb.cores))
	for i, m := range all {
		term := func(k int) sidePath { return sidePath{{a: m[k].a, b: m[k].b, s: 1}} }
		bb.kept[i] = coreSide{qkv: term(0), out: term(1), fc1: term(2), fc2: term(3)}
	}
	bb.sides = bb.kept
	return nil
}

// UseLoRA switches the placed adapter on or off for later runs.
func (bb *BlockBench) UseLoRA(on bool) {
	bb.sides = nil
	if on {
		bb.sides = bb.kept
	}
}

// LoRAFlops is the side paths' extra FLOP of one block's forward over
// rows: 2·rank·(in+out) per row per linear (0 when off).
func (bb *BlockBench) LoRAFlops(rows int) float64 {
	if bb.sides == nil {
		return 0
	}
	var n float64
	for _, p := range []sidePath{bb.sides[0].qkv, bb.sides[0].out, bb.sides[0].fc1, bb.sides[0].fc2} {
		for _, t := range p {
			n += 2 * float64(t.a.Ne(1)) * float64(t.a.Ne(0)+t.b.Ne(1))
		}
	}
	return n * float64(rows)
}

// Flops is the multiply-add count ×2 of one block's forward over rows (the
// anchor's count: AdaLN precomputed, elementwise work not counted).
func (bb *BlockBench) Flops(rows int) float64 {
	c := bb.Cfg
	h, in, f := float64(c.Hidden), float64(c.Inner()), float64(c.FFN)
	linear := 2 * float64(rows) * (h*3*in + in*h + h*2*f + f*h)
	return linear + 4*float64(rows)*float64(rows)*in
}

// Run builds and runs the stack over rows random rows with random
// modulation (two timesteps' worth of table rows) and RoPE positions on a
// 2-D grid, and returns the output; inspect, when set, sees the graph.
func (bb *BlockBench) Run(rows int, inspect func(*ggml.Graph)) ([]float32, error) {
	g, y, err := bb.graph(rows)
	if err != nil {
		return nil, err
	}
	defer g.Free()
	if inspect != nil {
		inspect(g)
	}
	if err := g.Compute(); err != nil {
		return nil, err
	}
	return y.F32(), nil
}

// Time runs the stack over rows rows once to warm up, then reps times, and
// returns the fastest run: one graph compute, including the upload of its
// inputs (the row activations, modulation and RoPE tables) but not a
// read-back, as a denoising step would.
func (bb *BlockBench) Time(rows, reps int) (time.Duration, error) {
	g, _, err := bb.graph(rows)
	if err != nil {
		return 0, err
	}
	defer g.Free()
	best := time.Duration(math.MaxInt64)
	for i := 0; i <= max(reps, 1); i++ {
		start := time.Now()
		if err := g.Compute(); err != nil {
			return 0, err
		}
		if el := time.Since(start); i > 0 {
			best = min(best, el)
		}
	}
	return best, nil
}

// graph builds the stack's forward over rows rows.
func (bb *BlockBench) graph(rows int) (*ggml.Graph, *ggml.Tensor, error) {
	if rows < 1 {
		return nil, nil, fmt.Errorf("dit: %d rows", rows)
	}
	// About 40 nodes per block; the rest are inputs and the modulation views.
	g := bb.b.NewGraph(max(ggml.DefaultGraphNodes, 64*len(bb.cores)+64))
	x, idx, a := bb.inputs(g, rows)
	tab, h, pairs := bb.table, bb.Cfg.Hidden, benchPairs
	for i := range bb.cores {
		// Each block gathers its own modulation rows, as Model.modulation
		// does from its block's table: the same ops and the same live
		// memory as the real forward.
		var mod Modulation
		for j := range mod {
			mod[j] = g.GetRows(g.View(tab, j*pairs*tab.Nb(1), []int{h, pairs}, nil), idx)
		}
		if bb.sides != nil {
			a.side = bb.sides[i]
		}
		x = bb.cores[i].Forward(g, x, mod, a, func(string, *ggml.Tensor) {})
	}
	g.Output(x)
	return g, x, nil
}

// benchPairs is the (timestep, modality) rows of the bench's modulation
// table: two timesteps' worth, as a T2VA step has.
const benchPairs = 4

// inputs makes the random row activations, each row's index into the
// modulation table, and the RoPE tables.
func (bb *BlockBench) inputs(g *ggml.Graph, rows int) (x, idx *ggml.Tensor, a attnCtx) {
	c := bb.Cfg
	h, pairs, half := c.Hidden, benchPairs, 3*c.RopeFreqs
	rnd := func(n int, a, off float32) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = off + a*(2*bb.rng.Float32()-1)
		}
		return v
	}
	x = g.Input("x", ggml.F32, h, rows)
	x.SetF32(rnd(h*rows, 1, 0))
	idx = g.Input("idx", ggml.I32, rows)
	iv := make([]int32, rows)
	for i := range iv {
		iv[i] = int32(i % pairs)
	}
	idx.SetI32(iv)
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
	return x, idx, attnCtx{cfg: c, layout: qkvInterleaved, cos: cos, sin: sin, name: "bench"}
}

// Memory is the compute buffers a Run over rows rows needs (ggml's plan,
// weights not included).
func (bb *BlockBench) Memory(rows int) (ggml.Memory, error) {
	g, _, err := bb.graph(rows)
	if err != nil {
		return ggml.Memory{}, err
	}
	defer g.Free()
	return g.Measure()
}
