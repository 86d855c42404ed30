package sampler

import "fmt"

// ReuseConfig is velocity reuse (h3.c --reuse k, not part of the release):
// the DiT runs at step 0, the last step and every Every-th step; a skipped
// step extrapolates each stream's velocity linearly in its own sigma from
// the last two evaluations, v = v₁ + r·(v₁ − v₀) with
// r = (σ − σ₁)/(σ₁ − σ₀) clamped to ±MaxRatio. With a single evaluation
// so far the last velocity is reused as is.
type ReuseConfig struct {
	Every    int     // 0 or 1: evaluate every step
	MaxRatio float64 // 0 means 2
}

// MaxReuse is the largest reuse interval accepted (h3.c allows 1 to 3).
const MaxReuse = 3

// Evaluated reports which of steps forwards run the model.
func (c ReuseConfig) Evaluated(steps int) []bool {
	out := make([]bool, steps)
	for i := range out {
		out[i] = c.Every <= 1 || i == 0 || i == steps-1 || i%c.Every == 0
	}
	return out
}

type reuser struct {
	cfg          ReuseConfig
	eval         []bool
	last, prev   int
	lastV, lastA []float32
	prevV, prevA []float32
	outV, outA   []float32
}

func newReuser(c ReuseConfig, steps int) (*reuser, error) {
	if c.Every < 0 || c.Every > MaxReuse {
		return nil, fmt.Errorf("sampler: reuse interval %d is out of range; use 1 to %d", c.Every, MaxReuse)
	}
	if c.MaxRatio == 0 {
		c.MaxRatio = 2
	}
	return &reuser{cfg: c, eval: c.Evaluated(steps), last: -1, prev: -1}, nil
}

func (r *reuser) evaluate(step int) bool { return r.eval[step] }

// record keeps copies of an evaluation when later steps may reuse it.
func (r *reuser) record(step int, vv, va []float32) {
	if r.cfg.Every <= 1 {
		return
	}
	r.prevV, r.lastV = r.lastV, append(r.prevV[:0], vv...)
	r.prevA, r.lastA = r.lastA, append(r.prevA[:0], va...)
	r.prev, r.last = r.last, step
}

func (r *reuser) extrapolate(step int, s Schedule) (vv, va []float32) {
	if r.prev < 0 {
		return r.lastV, r.lastA
	}
	r.outV = extrapolate(r.outV, r.lastV, r.prevV, r.ratio(s.Video, step))
	r.outA = extrapolate(r.outA, r.lastA, r.prevA, r.ratio(s.Audio, step))
	return r.outV, r.outA
}

func (r *reuser) ratio(sig []float64, step int) float32 {
	den := sig[r.last] - sig[r.prev]
	if den == 0 {
		return 0
	}
	x := (sig[step] - sig[r.last]) / den
	return float32(min(max(x, -r.cfg.MaxRatio), r.cfg.MaxRatio))
}

func extrapolate(dst, last, prev []float32, ratio float32) []float32 {
	dst = append(dst[:0], last...)
	for i := range dst {
		dst[i] += ratio * (last[i] - prev[i])
	}
	return dst
}
