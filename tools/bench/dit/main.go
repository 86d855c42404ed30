// Command dit-bench (make bench) times the MiniMax-H3 DiT on this machine:
// a tiny-config T2VA forward (the parity fixture's weights, 128x128 canvas,
// 22 frames) in rows/s, and one release-size block (hidden 5376, 56x128
// heads, SwiGLU 14336, bf16 random weights) over a few hundred rows in
// GFLOP/s, given as a ratio to the bf16 matmul ceiling of the block's own
// largest product measured in the same run.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"h3studio/engine/arch"
	"h3studio/engine/dit"
	"h3studio/engine/ggml"
	"h3studio/engine/layout"
	"h3studio/engine/sampler"
	"h3studio/engine/weights"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "dit-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	be, err := ggml.NewBackend(ggml.BackendOptions{})
	if err != nil {
		return err
	}
	defer be.Close()
	fmt.Printf("dit bench on %s (%s)\n", be.Caps().Name, be.Caps().Description)
	if err := tiny(be); err != nil {
		return err
	}
	return release(be, 256)
}

// tiny times one forward of the fixture model on a planned T2VA layout.
func tiny(be *ggml.Backend) error {
	dir := filepath.Join("tools", "fixtures", "dit", "testdata")
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return err
	}
	cfg, err := dit.ParseConfig(raw)
	if err != nil {
		return err
	}
	src, err := weights.OpenSafetensors(filepath.Join(dir, "weights.safetensors"))
	if err != nil {
		return err
	}
	defer src.Close()
	m, err := dit.Load(be, src, cfg, dit.Options{QKV: weights.QKVInterleaved})
	if err != nil {
		return err
	}
	defer m.Close()
	l, err := layout.Build(layout.Spec{Canvas: layout.Canvas{Width: 128, Height: 128}, Frames: 22, PromptTokens: 12})
	if err != nil {
		return err
	}
	seq, err := m.SequenceFor(l)
	if err != nil {
		return err
	}
	text, err := m.EncodeText(sampler.Noise(1, 0, seq.Segments[0].Rows*cfg.TextDim), seq.Segments[0].Rows)
	if err != nil {
		return err
	}
	sched, err := sampler.NewSchedule(4, sampler.DefaultVideoShift, sampler.DefaultAudioShift)
	if err != nil {
		return err
	}
	if err := m.PrepareAdaLN(dit.StepTimesteps(sched)); err != nil {
		return err
	}
	in := dit.Inputs{Text: text, Video: sampler.Noise(1, 1, seq.VideoRows()*cfg.VideoPatchDim()),
		Audio: sampler.Noise(1, 2, seq.AudioRows()*cfg.AudioChannels), T: dit.StepTimesteps(sched)[1]}
	if _, err := m.Forward(seq, in); err != nil { // warm-up
		return err
	}
	best := time.Duration(1 << 62)
	for i := 0; i < 3; i++ {
		start := time.Now()
		if _, err := m.Forward(seq, in); err != nil {
			return err
		}
		best = min(best, time.Since(start))
	}
	fmt.Printf("%-44s %8.0f rows/s  (%d rows, %s, best of 3)\n", "tiny DiT forward (fixture config, 3 blocks)",
		float64(seq.Rows())/best.Seconds(), seq.Rows(), best.Round(time.Microsecond))
	return nil
}

// release times one release-size bf16 block against the matmul ceiling.
func release(be *ggml.Backend, rows int) error {
	cfg, err := arch.ReleaseDiT()
	if err != nil {
		return err
	}
	ceil, err := ggml.MatMulGFLOPS(be, ggml.BF16, 2*cfg.FFN, rows, cfg.Hidden, 2)
	if err != nil {
		return err
	}
	fmt.Printf("%-44s %8.1f GFLOP/s  1.00x\n", fmt.Sprintf("bf16 mul_mat %dx%dx%d (ceiling)", 2*cfg.FFN, rows, cfg.Hidden), ceil)
	bb, err := dit.NewBlockBench(be, cfg, ggml.BF16, 1, 1)
	if err != nil {
		return err
	}
	defer bb.Close()
	if _, err := bb.Run(rows, nil); err != nil { // warm-up
		return err
	}
	start := time.Now()
	if _, err := bb.Run(rows, nil); err != nil {
		return err
	}
	el := time.Since(start)
	gf := bb.Flops(rows) / el.Seconds() / 1e9
	fmt.Printf("%-44s %8.1f GFLOP/s  %.2fx  (%s, %.0f rows/s, %.0f MiB weights)\n",
		fmt.Sprintf("release DiT block, %d rows, bf16", rows), gf, gf/ceil, el.Round(time.Millisecond),
		float64(rows)/el.Seconds(), float64(bb.Bytes())/(1<<20))
	return nil
}
