package engine

import "time"

// phaseETA is the time left in a phase that is done (0..1) of the way
// through after el: the pace so far once there is some, else what the
// plan's estimate has left, so a phase whose first item is long (a clip's
// VAE encode, the decoder's first window) still shows an ETA.
func phaseETA(estimate time.Duration, done float64, el time.Duration) time.Duration {
	if done >= 1 {
		return 0
	}
	if done > 0 {
		return time.Duration(float64(el) * (1 - done) / done)
	}
	if left := estimate - el; left > 0 {
		return left
	}
	return 0
}

// estimated is the plan's estimate for a phase.
func (g *generation) estimated(ph Phase) time.Duration {
	return time.Duration(g.plan.Time.Phase(string(ph)).Seconds * float64(time.Second))
}

// refProgress counts the references phase by pixels: each input is read
// (half its share) and VAE-encoded (the other half), so a 1024x768 clip
// weighs what it costs next to a small picture.
type refProgress struct {
	g           *generation
	t0          time.Time
	weight      []float64 // per input, normalised to sum 1
	done        float64
	step, total int
}

func (g *generation) newRefProgress(weights []float64) *refProgress {
	sum := 0.0
	for _, w := range weights {
		sum += w
	}
	p := &refProgress{g: g, t0: time.Now(), weight: make([]float64, len(weights)), total: 2 * len(weights)}
	for i, w := range weights {
		if sum > 0 {
			p.weight[i] = w / sum
		} else {
			p.weight[i] = 1 / float64(len(weights))
		}
	}
	return p
}

// advance marks half of input i done and reports it.
func (p *refProgress) advance(i int, msg string) {
	if i >= 0 && i < len(p.weight) {
		p.done += p.weight[i] / 2
	}
	p.step++
	p.report(msg)
}

func (p *refProgress) report(msg string) {
	el := time.Since(p.t0)
	p.g.sink(Event{Phase: PhaseReferences, Step: p.step, Total: p.total, Message: msg, Elapsed: el,
		ETA: phaseETA(p.g.estimated(PhaseReferences), min(p.done, 1), el)})
}
