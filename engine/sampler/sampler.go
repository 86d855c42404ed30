package sampler

import (
	"context"
	"fmt"
)

// Step is what the denoiser is told about one forward.
type Step struct {
	Index      int // 0-based forward index
	Total      int // forwards in the run
	SigmaVideo float64
	SigmaAudio float64
}

// Denoiser evaluates the model: data-ward velocities for the target video
// and audio latents (the same lengths as the inputs, which it must not keep).
type Denoiser interface {
	Velocity(ctx context.Context, s Step, video, audio []float32) (vVideo, vAudio []float32, err error)
}

// Config configures Run.
type Config struct {
	Schedule Schedule
	Reuse    ReuseConfig
	// Preview, when set, is called after every step with the current video
	// latent (read-only, valid during the call) for a cheap UI preview.
	Preview func(step, total int, video []float32)
}

// Run denoises video and audio in place from σ = 1 to 0. It checks ctx
// before every step and returns ctx.Err() at a step boundary when
// cancelled, with the latents as of the last finished step.
func Run(ctx context.Context, c Config, d Denoiser, video, audio []float32) error {
	s := c.Schedule
	n := s.Steps()
	if n < 1 || len(s.Audio) != len(s.Video) {
		return fmt.Errorf("sampler: schedule has %d video and %d audio points; build it with NewSchedule", len(s.Video), len(s.Audio))
	}
	r, err := newReuser(c.Reuse, n)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		var vv, va []float32
		if r.evaluate(i) {
			st := Step{Index: i, Total: n, SigmaVideo: s.Video[i], SigmaAudio: s.Audio[i]}
			if vv, va, err = d.Velocity(ctx, st, video, audio); err != nil {
				return fmt.Errorf("sampler: step %d of %d: %w", i+1, n, err)
			}
			if len(vv) != len(video) || len(va) != len(audio) {
				return fmt.Errorf("sampler: step %d: denoiser returned %d+%d velocities for %d+%d latents", i+1, len(vv), len(va), len(video), len(audio))
			}
			r.record(i, vv, va)
		} else {
			vv, va = r.extrapolate(i, s)
		}
		EulerStep(video, vv, s.Video[i], s.Video[i+1])
		EulerStep(audio, va, s.Audio[i], s.Audio[i+1])
		if c.Preview != nil {
			c.Preview(i+1, n, video)
		}
	}
	return nil
}
