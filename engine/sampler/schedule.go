package sampler

import (
	"fmt"
	"math"
)

// Release defaults: model_index.json _minimax_h3.sigma_shift_scales.
const (
	DefaultVideoShift = 12.0
	DefaultAudioShift = 3.0
	// MaxSteps bounds a schedule (h3.c's limit).
	MaxSteps = 1000
)

// Schedule is the pair of sigma ladders a run walks, N+1 points each from
// 1 down to 0 for N forwards. Index i of both is step i.
type Schedule struct {
	Video []float64
	Audio []float64
}

// Steps is the number of forwards.
func (s Schedule) Steps() int { return len(s.Video) - 1 }

// Shift maps a base-grid value b in [0,1] to σ = s·b / (1 + (s−1)·b).
func Shift(b, s float64) float64 { return s * b / (1 + (s-1)*b) }

// NewSchedule builds the schedule for steps forwards with the given shifts
// (use DefaultVideoShift, DefaultAudioShift unless the snapshot says
// otherwise).
func NewSchedule(steps int, videoShift, audioShift float64) (Schedule, error) {
	if steps < 1 || steps > MaxSteps {
		return Schedule{}, fmt.Errorf("sampler: %d steps is out of range; use 1 to %d", steps, MaxSteps)
	}
	if !(videoShift > 0) || !(audioShift > 0) || math.IsInf(videoShift, 0) || math.IsInf(audioShift, 0) {
		return Schedule{}, fmt.Errorf("sampler: sigma shifts must be positive, got video %g audio %g", videoShift, audioShift)
	}
	s := Schedule{Video: make([]float64, steps+1), Audio: make([]float64, steps+1)}
	for i := 0; i <= steps; i++ {
		b := 1 - float64(i)/float64(steps)
		s.Video[i] = Shift(b, videoShift)
		s.Audio[i] = Shift(b, audioShift)
	}
	s.Video[steps], s.Audio[steps] = 0, 0
	return s, nil
}

// Timestep is the model's timestep for a sigma: t = 1 − σ (not ×1000).
func Timestep(sigma float64) float64 { return 1 - sigma }

// EulerStep advances x in place by one Euler step from sigma to next with
// velocity v ≈ x0 − ε: x ← x + (sigma − next)·v, which moves
// x_σ = (1−σ)·x0 + σ·ε to x_next exactly when v is exact.
func EulerStep(x, v []float32, sigma, next float64) {
	if len(x) != len(v) {
		panic(fmt.Sprintf("sampler: EulerStep: %d latents but %d velocities", len(x), len(v)))
	}
	d := float32(sigma - next)
	for i := range x {
		x[i] += d * v[i]
	}
}
