package app

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"

	"h3studio/engine/arch"
	"h3studio/engine/dit"
	"h3studio/engine/ggml"
	"h3studio/engine/layout"
)

// ditBenchPromptTokens is the prompt length the DiT bench lays out: a
// typical prompt, and the length that reproduces the PyTorch anchor's row
// counts (1,966 rows at 512x512x22, 7,171 at 864x480x56).
const ditBenchPromptTokens = 100

// ditBenchReps is how many timed forwards a geometry gets after its
// warm-up; geometries above ditBenchLongRows get one (a forward there takes
// seconds, and the spread between runs is under a percent).
const (
	ditBenchReps     = 3
	ditBenchLongRows = 16384
)

// ditBench is the --dit part of `h3studio bench`: the release DiT's block
// stack with seeded synthetic weights generated on the device, timed at
// T2VA geometries.
type ditBench struct {
	geoms  []layout.Spec
	dtypes []ggml.DType
	blocks int // 0: the release's 50
	// loraRank, when set, also times each geometry with a seeded adapter
	// of that rank on the blocks' four core linears (--dit-lora).
	loraRank int
}

// parseDiTBench reads --dit ("512x512x22,864x480x56") and --dit-weights
// ("bf16,q8_0").
func parseDiTBench(geoms, dtypes string, blocks int) (*ditBench, error) {
	specs, err := parseGeometries("--dit", geoms)
	if err != nil {
		return nil, err
	}
	db := &ditBench{blocks: blocks}
	for _, s := range specs {
		s.PromptTokens = ditBenchPromptTokens
		db.geoms = append(db.geoms, s)
	}
	for _, s := range strings.Split(dtypes, ",") {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "bf16":
			db.dtypes = append(db.dtypes, ggml.BF16)
		case "f16":
			db.dtypes = append(db.dtypes, ggml.F16)
		case "q8_0":
			db.dtypes = append(db.dtypes, ggml.Q8_0)
		case "q4_k":
			db.dtypes = append(db.dtypes, ggml.Q4_K)
		default:
			return nil, &UsageError{Msg: fmt.Sprintf("--dit-weights: %q is not bf16, f16, q8_0 or q4_k", s)}
		}
	}
	if blocks < 0 {
		return nil, &UsageError{Msg: "--dit-blocks must not be negative"}
	}
	return db, nil
}

// run times every geometry for every weight type, one stack per type
// (placed, measured, freed before the next, so the device holds one).
func (db *ditBench) run(ctx context.Context, b *ggml.Backend, emit func(benchResult) error) error {
	cfg, err := arch.ReleaseDiT()
	if err != nil {
		return err
	}
	blocks := db.blocks
	if blocks == 0 {
		blocks = cfg.Layers
	}
	rows := make([]int, len(db.geoms))
	for i, s := range db.geoms {
		l, err := layout.Build(s)
		if err != nil {
			return &UsageError{Msg: fmt.Sprintf("--dit %dx%dx%d: %v", s.Canvas.Width, s.Canvas.Height, s.Frames, err)}
		}
		for _, seg := range l.Segments {
			rows[i] += seg.Rows
		}
	}
	for _, dt := range db.dtypes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := db.runType(ctx, b, cfg, dt, blocks, rows, emit); err != nil {
			return err
		}
	}
	return nil
}

func (db *ditBench) runType(ctx context.Context, b *ggml.Backend, cfg *dit.Config, dt ggml.DType, blocks int,
	rows []int, emit func(benchResult) error) error {
	bb, err := dit.NewBlockBench(b, cfg, dt, blocks, 1)
	if err != nil {
		return err
	}
	defer bb.Close()
	if db.loraRank > 0 {
		if err := bb.AddLoRA(db.loraRank, 2); err != nil {
			return err
		}
		bb.UseLoRA(false)
	}
	for i, s := range db.geoms {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := rows[i]
		mem, err := bb.Memory(n)
		if err != nil {
			return err
		}
		reps := ditBenchReps
		if n > ditBenchLongRows {
			reps = 1
		}
		d, err := bb.Time(n, reps)
		if err != nil {
			return err
		}
		splits := b.Splits()
		free, total := b.DeviceMemory()
		gemm, attn, err := blockOps(b, cfg, dt, n, reps)
		if err != nil {
			return err
		}
		flops := float64(blocks) * bb.Flops(n)
		r := benchResult{
			Name:   fmt.Sprintf("dit %d blocks %dx%dx%d, %s weights", blocks, s.Canvas.Width, s.Canvas.Height, s.Frames, dt),
			GFLOPS: flops / d.Seconds() / 1e9, Seconds: d.Seconds(), Rows: n, Blocks: blocks, DType: dt.String(),
			WeightBytes: int64(bb.Bytes()), ComputeBytes: int64(mem.Device), DeviceUsedBytes: int64(total - free),
			Splits: splits, BlockGEMMSeconds: gemm, BlockAttentionSeconds: attn,
		}
		if db.loraRank > 0 {
			base, with, err := loraTimes(bb, n, reps)
			if err != nil {
				return err
			}
			r.LoRARank, r.LoRASeconds, r.LoRARatio = db.loraRank, with, with/base
		}
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

// loraPairs is how many times loraTimes alternates the two forwards.
const loraPairs = 5

// loraTimes is the stack's best forward time without and with its adapter,
// the two timed in turn (loraPairs times, reps each) so that a drift of
// the machine's speed during the run (clocks, other work) falls on both
// alike: timed one after the other, single runs of the same pair differed
// by 2-6 %, the size of the effect measured.
func loraTimes(bb *dit.BlockBench, rows, reps int) (base, with float64, err error) {
	defer bb.UseLoRA(false)
	base, with = math.Inf(1), math.Inf(1)
	for i := 0; i < loraPairs; i++ {
		for _, on := range []bool{false, true} {
			bb.UseLoRA(on)
			d, err := bb.Time(rows, reps)
			if err != nil {
				return 0, 0, err
			}
			if on {
				with = min(with, d.Seconds())
			} else {
				base = min(base, d.Seconds())
			}
		}
	}
	return base, with, nil
}

// blockOps times one block's four GEMMs (weights stored as dt) and its
// attention alone at rows rows, on the same backend: what the forward's
// time would be made of with no glue, no copies and no graph splits.
func blockOps(b *ggml.Backend, cfg *dit.Config, dt ggml.DType, rows, reps int) (gemm, attn float64, err error) {
	h, in, f := cfg.Hidden, cfg.Heads*cfg.HeadDim, cfg.FFN
	for _, mk := range [][2]int{{3 * in, h}, {h, in}, {2 * f, h}, {h, f}} {
		gf, err := ggml.MatMulGFLOPS(b, dt, mk[0], rows, mk[1], reps)
		if err != nil {
			return 0, 0, err
		}
		gemm += 2 * float64(mk[0]) * float64(rows) * float64(mk[1]) / (gf * 1e9)
	}
	_, d, err := ggml.AttentionGFLOPS(b, rows, cfg.Heads, cfg.HeadDim, reps)
	return gemm, d.Seconds(), err
}

// ditFlags declares the --dit flags and returns the reader of their bench
// (nil without --dit).
func ditFlags(fs *flag.FlagSet) func() (*ditBench, error) {
	geoms := fs.String("dit", "", "also time the release DiT's block stack (seeded synthetic weights) at these T2VA geometries, e.g. 512x512x22,864x480x56")
	types := fs.String("dit-weights", "bf16,q8_0", "weight types of the --dit stacks")
	blocks := fs.Int("dit-blocks", 0, "blocks in the --dit stack (0: the release's 50)")
	rank := fs.Int("dit-lora", 0, "also time each --dit geometry with a seeded LoRA of this rank on every block (the Turbo adapters' is 64)")
	return func() (*ditBench, error) {
		if *geoms == "" {
			return nil, nil
		}
		db, err := parseDiTBench(*geoms, *types, *blocks)
		if err != nil {
			return nil, err
		}
		if *rank < 0 {
			return nil, &UsageError{Msg: "--dit-lora must not be negative"}
		}
		db.loraRank = *rank
		return db, nil
	}
}
