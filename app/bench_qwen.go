package app

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/plan"
	"h3studio/engine/textenc"
	"h3studio/engine/weights"
)

// qwenBench is the --qwen part of `h3studio bench`: the production
// Qwen3-VL language-layer prefill with seeded synthetic weights generated
// on the device, at the given prompt lengths.
type qwenBench struct {
	tokens []int
	dt     ggml.DType
	layers int          // 0: the 50 H3 uses
	trace  *slog.Logger // --trace: every graph's time on stderr; nil: quiet
}

// qwenFlags registers the --qwen flags on fs; the returned function reads
// them after parsing (nil without --qwen). --trace sends every graph's
// time to stderr.
func qwenFlags(fs *flag.FlagSet, stderr io.Writer) func() (*qwenBench, error) {
	tokens := fs.String("qwen", "", "also time the Qwen3-VL language-layer prefill (seeded synthetic weights) at these prompt lengths, e.g. 10231,100000")
	dtype := fs.String("qwen-weights", "bf16", "weight type of the --qwen layers")
	layers := fs.Int("qwen-layers", 0, "layers in the --qwen prefill (0: the 50 H3 uses)")
	trace := fs.Bool("trace", false, "print every --qwen graph's time to stderr")
	return func() (*qwenBench, error) {
		if *tokens == "" {
			return nil, nil
		}
		qb, err := parseQwenBench(*tokens, *dtype, *layers)
		if err == nil && *trace {
			qb.trace = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		}
		return qb, err
	}
}

func parseQwenBench(tokens, dtype string, layers int) (*qwenBench, error) {
	qb := &qwenBench{layers: layers}
	for _, s := range strings.Split(tokens, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 {
			return nil, &UsageError{Msg: fmt.Sprintf("--qwen: %q is not a token count", s)}
		}
		qb.tokens = append(qb.tokens, n)
	}
	switch strings.ToLower(dtype) {
	case "bf16":
		qb.dt = ggml.BF16
	case "f16":
		qb.dt = ggml.F16
	case "q8_0":
		qb.dt = ggml.Q8_0
	default:
		return nil, &UsageError{Msg: fmt.Sprintf("--qwen-weights: %q is not bf16, f16 or q8_0", dtype)}
	}
	if layers < 0 {
		return nil, &UsageError{Msg: "--qwen-layers must not be negative"}
	}
	return qb, nil
}

// run times one prefill per length (the first after a short warm-up, so
// cuBLAS and the allocator are initialised outside the timings).
func (qb *qwenBench) run(ctx context.Context, b *ggml.Backend, emit func(benchResult) error) error {
	cfg, err := arch.ReleaseQwen()
	if err != nil {
		return err
	}
	rel, err := arch.Release()
	if err != nil {
		return err
	}
	dims := plan.DimsOf(rel)
	layers := qb.layers
	if layers == 0 {
		layers = textenc.ReleaseLayers
	}
	pb, err := textenc.NewPrefillBench(b, cfg, layers, qb.dt, 1, textenc.Options{Logger: qb.trace})
	if err != nil {
		return err
	}
	defer pb.Close()
	// The weights are placed; what the device holds beyond this is the
	// prefill's working memory (rows, K/V, compute buffers, ggml-cuda's
	// pool, which keeps what it grew to).
	free0, total := b.DeviceMemory()
	base := total - free0
	if _, err := pb.Run(ctx, 256); err != nil {
		return err
	}
	for _, n := range qb.tokens {
		stop := watchDevice(b)
		d, err := pb.Run(ctx, n)
		high := stop()
		if err != nil {
			return err
		}
		ms, _ := weights.ReadMemStat() // PeakRSS stays 0 where unknown
		gemm, err := qwenLayerGEMMs(b, cfg.Text, qb.dt, n)
		if err != nil {
			return err
		}
		r := benchResult{
			Name:   fmt.Sprintf("qwen %d layers prefill %d tokens, %s weights", layers, n, qb.dt),
			GFLOPS: pb.Flops(n) / d.Seconds() / 1e9, Seconds: d.Seconds(), Rows: n, Blocks: layers,
			DType: qb.dt.String(), WeightBytes: int64(pb.Bytes()), DeviceUsedBytes: int64(high),
			HostPeakBytes: ms.PeakRSS, Splits: b.Splits(), BlockGEMMSeconds: gemm,
			PlannedWorkBytes: dims.QwenPrefillBytes(n),
		}
		if high > base {
			r.ComputeBytes = int64(high - base)
		}
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

// watchDevice samples the device's memory in use every 5 ms until the
// returned stop is called, which returns the highest sample: the high-water
// mark of the work in between (ggml allocates between graphs, so samples
// between kernels see every buffer).
func watchDevice(b *ggml.Backend) (stop func() uint64) {
	done := make(chan struct{})
	high := make(chan uint64, 1)
	go func() {
		var h uint64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if free, total := b.DeviceMemory(); total-free > h {
				h = total - free
			}
			select {
			case <-done:
				high <- h
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-high }
}

// qwenLayerGEMMs times one language layer's seven projections alone at n
// rows, as the prefill runs them (row groups of the encoder's default
// size, weights as dt, operands resident on the device): what a layer's
// time would be with no attention, glue or host transfers.
func qwenLayerGEMMs(b *ggml.Backend, c textenc.TextConfig, dt ggml.DType, n int) (float64, error) {
	d, q, kv := c.Hidden, c.Heads*c.HeadDim, c.KVHeads*c.HeadDim
	group := min(n, plan.QwenRowGroup)
	var perGroup float64
	for _, mk := range [][2]int{{q, d}, {kv, d}, {kv, d}, {d, q}, {c.Intermediate, d}, {c.Intermediate, d}, {d, c.Intermediate}} {
		gf, err := ggml.MatMulGFLOPS(b, dt, mk[0], group, mk[1], 3)
		if err != nil {
			return 0, err
		}
		perGroup += 2 * float64(mk[0]) * float64(group) * float64(mk[1]) / (gf * 1e9)
	}
	return perGroup * float64(n) / float64(group), nil
}
