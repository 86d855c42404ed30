package plan

import (
	"fmt"
	"strings"

	"h3studio/engine/layout"
)

// Repair is a concrete change to a refused request that makes it fit;
// every field set is a sufficient change on its own.
type Repair struct {
	Frames int            `json:"frames,omitempty"` // fewer output frames
	Model  string         `json:"model,omitempty"`  // a lighter model profile
	Canvas *layout.Canvas `json:"canvas,omitempty"` // a smaller output canvas
	// MemoryGB is the smallest memory size (of the same chip) the request
	// fits as it is, when none of the above is found.
	MemoryGB int `json:"memory_gb,omitempty"`
	// BudgetGB is the smallest memory budget, no more than the machine's
	// own, the request fits in as it is, when the budget was overridden
	// (--memory-gb, the window's Settings) below what the machine has.
	BudgetGB float64 `json:"budget_gb,omitempty"`
	Text     string  `json:"text"`
}

// Apply returns the request with one of the repair's changes made: the
// frames when set, else the canvas (the model is chosen by the caller).
func (rp *Repair) Apply(r Request) Request {
	switch {
	case rp.Frames > 0:
		r.Frames = rp.Frames
	case rp.Canvas != nil:
		r.Canvas, r.RenderCanvas = *rp.Canvas, layout.Canvas{}
	}
	return r
}

// fitsAfterFitting plans without searching for repairs.
func fitsAfterFitting(r Request, mc Machine, m Model, opt Options) bool {
	s, err := newState(r)
	if err != nil {
		return false
	}
	e, err := s.evaluate(m, mc.Budget())
	if err != nil {
		return false
	}
	f := fitter{m: m, budget: mc.Budget(), limit: opt.MaxSequence, s: s, e: e}
	f.run()
	return f.fits()
}

// findRepair searches, in order, a lighter model, fewer frames and a
// smaller canvas, keeping the mildest change of each kind that fits.
func findRepair(r Request, mc Machine, m Model, opt Options) *Repair {
	var rp Repair
	var says []string
	if mc.BudgetBytes > 0 {
		own := mc
		own.BudgetBytes = 0
		if b, ok := smallestBudget(r, mc, own.Budget(), m, opt); ok {
			rp.BudgetGB = b
			says = append(says, fmt.Sprintf("a memory budget of %.1f GB", b))
		}
	}
	for _, name := range m.Lighter {
		lm, err := LookupModel(name)
		if err == nil && fitsAfterFitting(r, mc, lm, opt) {
			rp.Model = name
			says = append(says, fmt.Sprintf("a %s model (--model %s)", strings.TrimPrefix(name, "official-"), name))
			break
		}
	}
	for f := layout.AlignFrames(r.Frames) - 17; f >= layout.MinFrames; f -= 17 {
		c := r
		c.Frames = f
		if fitsAfterFitting(c, mc, m, opt) {
			rp.Frames = f
			says = append([]string{fmt.Sprintf("%d frames (%.1f s)", f, float64(f)/layout.FPS)}, says...)
			break
		}
	}
	if rp.Frames == 0 {
		for frac := 0.8; frac >= 0.1; frac -= 0.1 {
			cv := layout.ScaleCanvas(r.Canvas, frac)
			if cv.Pixels() >= r.Canvas.Pixels() {
				continue
			}
			c := r
			c.Canvas, c.RenderCanvas = cv, layout.Canvas{}
			if fitsAfterFitting(c, mc, m, opt) {
				rp.Canvas = &cv
				says = append(says, fmt.Sprintf("a %s canvas", cv))
				break
			}
		}
	}
	if len(says) == 0 {
		// The sizes Macs are sold with; a machine of another kind is
		// named by its memory alone.
		for _, gb := range []int{8, 16, 24, 32, 36, 48, 64, 96, 128, 192, 256, 512} {
			if int64(gb)*gib > mc.MemoryBytes && fitsAfterFitting(r, mc.WithMemoryGB(gb), m, opt) {
				rp.MemoryGB = gb
				if mc.Mac() {
					says = append(says, fmt.Sprintf("a Mac with %d GB", gb))
				} else {
					says = append(says, fmt.Sprintf("a machine with %d GB of memory", gb))
				}
				break
			}
		}
	}
	if len(says) == 0 {
		return nil
	}
	rp.Text = "use " + strings.Join(says, " or ")
	return &rp
}

// smallestBudget is the smallest budget, in tenths of a GB up to limit,
// the request fits in as it is; false when limit itself is too small.
// Fitting only gets easier as the budget grows, so a bisection finds it.
func smallestBudget(r Request, mc Machine, limit int64, m Model, opt Options) (float64, bool) {
	fitsAt := func(tenths int64) bool {
		return fitsAfterFitting(r, mc.WithBudgetGB(float64(tenths)/10), m, opt)
	}
	lo, hi := mc.BudgetBytes*10/gib, limit*10/gib
	if hi <= lo || !fitsAt(hi) {
		return 0, false
	}
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if fitsAt(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return float64(hi) / 10, true
}
