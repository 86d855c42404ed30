// Command render-bench (make bench) times a whole `h3studio render` of the
// default request (512x512, 22 frames, 20 steps, T2VA) on the embedded
// tiny model, split by phase and by the stages inside them. The reference
// measured in the same run is FFmpeg encoding the same number of 512x512
// frames (the mux a render ends with, on its own): each figure is also
// given as a multiple of it, so runs on different machines compare.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"h3studio/app"
	"h3studio/engine"
	"h3studio/engine/plan"
	"h3studio/media"
)

func main() {
	threads := flag.Int("threads", 0, "CPU threads for the engine (0: all)")
	steps := flag.Int("steps", plan.DefaultSteps, "denoise steps")
	flag.Parse()
	if err := run(*threads, *steps); err != nil {
		fmt.Fprintln(os.Stderr, "render-bench:", err)
		os.Exit(1)
	}
}

func run(threads, steps int) error {
	dir, err := os.MkdirTemp("", "h3studio-render-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	rd := &app.Renderer{CacheDir: dir, DefaultModel: app.TinyModel, Threads: threads, Logger: quiet}
	defer rd.Close()
	req := app.Request{Prompt: "A red fox runs through fresh snow at dawn, its breath rising in the cold air.",
		Width: app.DefaultWidth, Height: app.DefaultHeight, Frames: app.DefaultFrames, Steps: steps, Seed: 1,
		Output: filepath.Join(dir, "bench.mp4")}
	ctx := context.Background()
	// The first Prepare writes the tiny model; time the render alone.
	if _, err := rd.Prepare(ctx, req); err != nil {
		return err
	}
	t0 := time.Now()
	job, err := rd.Prepare(ctx, req)
	if err != nil {
		return err
	}
	if _, err := job.Run(ctx, nil); err != nil {
		return err
	}
	wall := time.Since(t0)
	ref, err := encodeReference(ctx, dir, req.Width, req.Height, job.Plan.Frames)
	if err != nil {
		return err
	}
	st := job.Stats
	fmt.Printf("render bench: tiny model, %s %dx%d, %d frames, %d steps, %d DiT rows, %d Qwen tokens; engine on %s\n",
		job.Plan.Task, req.Width, req.Height, job.Plan.Frames, steps, st.Rows, st.TextTokens, job.Engine.Backend().Name)
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "stage\tms\tshare\tx ffmpeg encode\t")
	row := func(name string, d time.Duration) {
		fmt.Fprintf(tw, "%s\t%.0f\t%.1f%%\t%.2f\t\n", name, ms(d), 100*ms(d)/ms(wall), ms(d)/ms(ref))
	}
	for _, p := range st.Phases {
		row(string(p.Phase), p.Elapsed)
	}
	for _, p := range st.Parts {
		row("  "+string(p.Phase), p.Elapsed)
	}
	row("render (wall)", wall)
	row("reference: ffmpeg encode", ref)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Printf("peak memory %.2f GB; %.1f ms per DiT forward\n", float64(st.PeakBytes)/1e9, ms(phase(st, engine.PhaseDenoise))/float64(st.Forwards))
	return nil
}

// encodeReference times FFmpeg writing n random w x h frames (no audio)
// through the same media path the render's mux uses.
func encodeReference(ctx context.Context, dir string, w, h, n int) (time.Duration, error) {
	rng := rand.New(rand.NewSource(1))
	frames := make([]media.Frame, n)
	for i := range frames {
		frames[i] = media.NewFrame(w, h)
		rng.Read(frames[i].Pix)
	}
	t0 := time.Now()
	if err := media.EncodeMP4(ctx, filepath.Join(dir, "reference.mp4"), media.EncodeOptions{Width: w, Height: h}, frames); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

func phase(st *engine.Stats, p engine.Phase) time.Duration {
	for _, x := range st.Phases {
		if x.Phase == p {
			return x.Elapsed
		}
	}
	return 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
