package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"h3studio/engine/ggml"
	"h3studio/engine/layout"
)

func init() {
	register(Command{
		Name:    "bench",
		Summary: "measure this machine's matmul, attention and release-size DiT, Qwen, video VAE and whole-render throughput on the engine's backend (Metal on a Mac, CUDA with make cuda)",
		Run:     runBench,
	})
}

// benchResult is one line of `h3studio bench`.
type benchResult struct {
	Name    string  `json:"name"`
	Backend string  `json:"backend"` // ggml device name: "CPU", "Metal", "CUDA0"
	GFLOPS  float64 `json:"gflops"`
	Seconds float64 `json:"seconds"`
	// The DiT forward's (--dit) geometry and memory: weight buffers, ggml's
	// compute buffers, and the device memory in use after the run.
	Rows            int    `json:"rows,omitempty"`
	Blocks          int    `json:"blocks,omitempty"`
	DType           string `json:"dtype,omitempty"`
	WeightBytes     int64  `json:"weight_bytes,omitempty"`
	ComputeBytes    int64  `json:"compute_bytes,omitempty"`
	DeviceUsedBytes int64  `json:"device_used_bytes,omitempty"`
	// PlannedWorkBytes is the planner's prediction of ComputeBytes (the
	// Qwen prefill's working memory beside its weights).
	PlannedWorkBytes int64 `json:"planned_work_bytes,omitempty"`
	// Splits is ggml's scheduler splits of the forward (1: no CPU
	// fallback); the block's GEMMs and attention are timed alone.
	Splits                int     `json:"splits,omitempty"`
	BlockGEMMSeconds      float64 `json:"block_gemm_seconds,omitempty"`
	BlockAttentionSeconds float64 `json:"block_attention_seconds,omitempty"`
	// HostPeakBytes is the process's peak resident set after the
	// measurement (Linux; the Qwen prefill keeps rows and K/V on the host).
	HostPeakBytes int64 `json:"host_peak_bytes,omitempty"`
	// LoRASeconds is the DiT forward with a rank-LoRARank adapter on every
	// block's core linears (--dit-lora); LoRARatio is it over Seconds.
	LoRARank    int     `json:"lora_rank,omitempty"`
	LoRASeconds float64 `json:"lora_seconds,omitempty"`
	LoRARatio   float64 `json:"lora_ratio,omitempty"`
	// The video VAE decode (--vae): the tile the planner's options gave
	// the decoder (Residency and the per-call DecodeBudgetBytes it derives
	// them from), the decoder graphs run, their share of Seconds (compute
	// and read-back; the rest is host work) and the frames decoded.
	// CallBufferBytes is the compute buffers ggml reserves for one decoder
	// call (the planner's VideoDecodeBytes predicts it).
	TilePx            int     `json:"tile_px,omitempty"`
	CallBufferBytes   int64   `json:"call_buffer_bytes,omitempty"`
	DecodeCalls       int     `json:"decode_calls,omitempty"`
	GraphSeconds      float64 `json:"graph_seconds,omitempty"`
	Frames            int     `json:"frames,omitempty"`
	Residency         string  `json:"residency,omitempty"`
	DecodeBudgetBytes int64   `json:"decode_budget_bytes,omitempty"`
	// The whole render (--render): its steps, the plan's peak, and per
	// phase the engine's wall time, the device's and the process's
	// high-water marks while it ran and the plan's peak for it; Parts are
	// the engine's timed stages inside the phases (Stats.Parts).
	Steps            int           `json:"steps,omitempty"`
	PlannedPeakBytes int64         `json:"planned_peak_bytes,omitempty"`
	Phases           []renderPhase `json:"phases,omitempty"`
	Parts            []renderPart  `json:"parts,omitempty"`
}

// runBench times the two kernels a generation spends its time in, on the
// same backend renders use, so a user can compare machines (and the
// planner's throughput profile) without the source tree: `make bench` needs
// the repository and references; this needs only the binary. --dit,
// --qwen, --vae and --render add the release-size DiT forward, Qwen
// prefill, video VAE decode and a whole T2VA render.
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	size := fs.Int("size", 2048, "matmul size N for N x N x N products")
	tokens := fs.Int("tokens", 4096, "attention sequence length (8 heads of 128)")
	cpu := fs.Bool("cpu", false, "measure the CPU backend even where a GPU exists")
	asJSON := fs.Bool("json", false, "print one JSON object per measurement")
	ditBenchFromFlags := ditFlags(fs)
	qwenBenchFromFlags := qwenFlags(fs, stderr)
	vaeBenchFromFlags := vaeFlags(fs)
	renderBenchFromFlags := renderFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	db, err := ditBenchFromFlags()
	if err != nil {
		return err
	}
	qb, err := qwenBenchFromFlags()
	if err != nil {
		return err
	}
	vb, err := vaeBenchFromFlags()
	if err != nil {
		return err
	}
	rb, err := renderBenchFromFlags()
	if err != nil {
		return err
	}
	if *size < 64 || *size > 16384 || *tokens < 64 || *tokens > 65535 {
		return &UsageError{Msg: "--size must be 64..16384 and --tokens 64..65535"}
	}
	dev := ggml.DeviceAuto
	if *cpu {
		dev = ggml.DeviceCPU
	}
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: dev})
	if err != nil {
		return err
	}
	defer b.Close()
	caps := b.Caps()
	if !*asJSON {
		fmt.Fprintf(stdout, "backend %s (%s)\n", caps.Name, caps.Description)
	}
	emit := func(r benchResult) error {
		r.Backend = caps.Name
		if *asJSON {
			return json.NewEncoder(stdout).Encode(r)
		}
		return printBench(stdout, r)
	}
	if err := kernels(ctx, b, *size, *tokens, emit); err != nil {
		return err
	}
	if db != nil {
		if err := db.run(ctx, b, emit); err != nil {
			return err
		}
	}
	if qb != nil {
		if err := qb.run(ctx, b, emit); err != nil {
			return err
		}
	}
	if vb != nil {
		if err := vb.run(ctx, b, emit); err != nil {
			return err
		}
	}
	if rb != nil {
		rb.device = dev
		return rb.run(ctx, emit)
	}
	return nil
}

// parseGeometries reads a flag's WIDTHxHEIGHTxFRAMES list
// ("512x512x22,864x480x56").
func parseGeometries(flag, geoms string) ([]layout.Spec, error) {
	var out []layout.Spec
	for _, g := range strings.Split(geoms, ",") {
		f := strings.Split(strings.TrimSpace(g), "x")
		if len(f) != 3 {
			return nil, &UsageError{Msg: fmt.Sprintf("%s: %q is not WIDTHxHEIGHTxFRAMES", flag, g)}
		}
		var v [3]int
		for i, s := range f {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return nil, &UsageError{Msg: fmt.Sprintf("%s: %q is not WIDTHxHEIGHTxFRAMES", flag, g)}
			}
			v[i] = n
		}
		out = append(out, layout.Spec{Canvas: layout.Canvas{Width: v[0], Height: v[1]}, Frames: v[2]})
	}
	return out, nil
}

// kernels times n^3 matmuls in the three weight types and attention over
// tokens tokens.
func kernels(ctx context.Context, b *ggml.Backend, n, tokens int, emit func(benchResult) error) error {
	for _, dt := range []ggml.DType{ggml.F32, ggml.BF16, ggml.Q8_0} {
		if err := ctx.Err(); err != nil {
			return err
		}
		gf, err := ggml.MatMulGFLOPS(b, dt, n, n, n, 3)
		if err != nil {
			return err
		}
		secs := 2 * float64(n) * float64(n) * float64(n) / (gf * 1e9)
		if err := emit(benchResult{Name: fmt.Sprintf("matmul %d^3, %s weights", n, dt), GFLOPS: gf, Seconds: secs}); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	gf, d, err := ggml.AttentionGFLOPS(b, tokens, 8, 128, 1)
	if err != nil {
		return err
	}
	return emit(benchResult{Name: fmt.Sprintf("attention %d x 8x128, %s K/V", tokens, b.KVType()), GFLOPS: gf, Seconds: d.Round(time.Millisecond).Seconds()})
}

// printBench writes one result as a line of text.
func printBench(w io.Writer, r benchResult) error {
	line := fmt.Sprintf("%-36s %9.1f GFLOP/s  %7.3f s", r.Name, r.GFLOPS, r.Seconds)
	if r.Rows > 0 {
		line += fmt.Sprintf("  %d rows, weights %s", r.Rows, GBText(r.WeightBytes))
	}
	if r.DecodeCalls > 0 {
		line += fmt.Sprintf("  %d frames in %d calls (graphs %.3f s), weights %s", r.Frames, r.DecodeCalls, r.GraphSeconds, GBText(r.WeightBytes))
	}
	if r.ComputeBytes > 0 {
		line += fmt.Sprintf(", compute %s", GBText(r.ComputeBytes))
	}
	if r.DeviceUsedBytes > 0 { // the CPU device reports no memory
		line += fmt.Sprintf(", device in use %s", GBText(r.DeviceUsedBytes))
	}
	if r.PlannedWorkBytes > 0 {
		line += fmt.Sprintf(", planned %s", GBText(r.PlannedWorkBytes))
	}
	if r.LoRARank > 0 {
		line += fmt.Sprintf("; with a rank-%d LoRA %.3f s (%.3fx)", r.LoRARank, r.LoRASeconds, r.LoRARatio)
	}
	if r.Phases != nil {
		line = renderLine(r)
	}
	_, err := fmt.Fprintln(w, line)
	return err
}
