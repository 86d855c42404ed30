package plan

import (
	"fmt"
	"math"
	"path/filepath"

	"h3studio/engine/layout"
)

// Decision kinds, in the order the fitter tries them (least harm first).
const (
	DecideStreamText   = "stream_text_encoder"
	DecideStreamDiT    = "stream_dit"
	DecideStreamVAE    = "stream_vae_decoder"
	DecideImagePolicy  = "downscale_images_policy"
	DecideImageCap     = "downscale_images"
	DecidePoolTemporal = "pool_video_temporal"
	DecidePoolSpatial  = "pool_video_spatial"
	DecideShortenClips = "shorten_reference_clips"
	DecideClipCanvas   = "downscale_reference_clips"
	DecideRenderCanvas = "lower_render_canvas"
)

const (
	// minImageEdge is where down-scaling images stops: below it identity
	// suffers more than from pooling or shortening the clips that follow.
	minImageEdge  = 512
	minClipFrames = 48  // shortening stops at 2 s of reference
	clipStep      = 24  // shorten in whole seconds
	minClipEdge   = 256 // clip down-scaling stops at this short edge
)

type fitter struct {
	m         Model
	budget    int64
	limit     int
	s         state
	e         eval
	decisions []Decision
}

func (f *fitter) overSeq() bool { return f.limit > 0 && f.e.seq > f.limit }
func (f *fitter) overMem() bool { return f.e.peak > f.budget }
func (f *fitter) fits() bool    { return !f.overSeq() && !f.overMem() }

// gb prints bytes in the GB Apple sells and Activity Monitor shows
// (2^30 bytes), the unit the machine profiles' sizes are in.
func gb(b int64) string { return fmt.Sprintf("%.1f GB", float64(b)/(1<<30)) }

// violation says what is wrong, in one sentence.
func (f *fitter) violation() string {
	seq := fmt.Sprintf("Qwen sequence of %d tokens exceeds the backend's limit of %d", f.e.seq, f.limit)
	if !f.overMem() {
		return "the request's " + seq
	}
	s := fmt.Sprintf("the request needs %s at its %s peak, over this machine's %s budget", gb(f.e.peak), f.e.phase, gb(f.budget))
	if f.overSeq() {
		s += ", and its " + seq
	}
	return s
}

// try keeps a candidate when it reduces what is over (the memory excess
// summed over phases, or the sequence over its limit) and grows no phase.
func (f *fitter) try(c state, kind, target, what string) bool {
	if f.fits() {
		return false
	}
	ce, err := c.evaluate(f.m, f.budget)
	if err != nil || len(ce.phases) != len(f.e.phases) {
		return false
	}
	seqBetter := f.overSeq() && ce.seq < f.e.seq
	memBetter := f.overMem() && excessOf(ce.phases, f.budget) < excessOf(f.e.phases, f.budget)
	if !seqBetter && !memBetter {
		return false
	}
	best, drop := 0, int64(-1)
	for i := range ce.phases {
		d := f.e.phases[i].PeakBytes - ce.phases[i].PeakBytes
		if d < 0 {
			return false
		}
		if d > drop && (f.e.phases[i].PeakBytes > f.budget || !memBetter) {
			best, drop = i, d
		}
	}
	var why string
	if memBetter {
		p := f.e.phases[best]
		why = fmt.Sprintf("%s needed %s of a %s budget", p.Name, gb(p.PeakBytes), gb(f.budget))
	} else {
		why = fmt.Sprintf("Qwen sequence %d over the limit %d", f.e.seq, f.limit)
	}
	f.decisions = append(f.decisions, Decision{Kind: kind, Target: target, Reason: why + "; " + what,
		Phase: f.e.phases[best].Name, PeakBefore: f.e.phases[best].PeakBytes, PeakAfter: ce.phases[best].PeakBytes,
		SequenceBefore: f.e.seq, SequenceAfter: ce.seq})
	f.s, f.e = c, ce
	return true
}

// run applies the fitting steps in order, each only while still needed.
func (f *fitter) run() {
	steps := []func(){f.streamWeights, f.downscaleImages, f.poolClips, f.shortenClips, f.downscaleClips, f.lowerCanvas}
	for _, step := range steps {
		if f.fits() {
			return
		}
		step()
	}
}

func (f *fitter) streamWeights() {
	c := f.s.clone()
	c.knobs.TextEncoder = Streamed
	f.try(c, DecideStreamText, "text encoder", fmt.Sprintf("stream the Qwen layers through %d slots instead of holding all %d (%s)",
		streamSlots, f.m.Dims.QLayersUsed, gb(f.m.QwenUsedBytes())))
	c = f.s.clone()
	c.knobs.DiT = Streamed
	f.try(c, DecideStreamDiT, "DiT", fmt.Sprintf("stream the DiT blocks from disk two at a time instead of mapping %s (slower per step)",
		gb(int64(f.s.layers(f.m))*f.m.DiTBlockBytes())))
	c = f.s.clone()
	c.knobs.VAEDecoder = Streamed
	f.try(c, DecideStreamVAE, "video VAE decoder", fmt.Sprintf("stream the decoder's blocks instead of holding %s", gb(f.m.VAEDecoderBytes())))
}

func (f *fitter) imageIndexes() []int {
	var out []int
	for i, r := range f.s.spec.Refs {
		if r.Kind == layout.RefImage {
			out = append(out, i)
		}
	}
	return out
}

func (f *fitter) downscaleImages() {
	imgs := f.imageIndexes()
	if len(imgs) == 0 {
		return
	}
	c := f.s.clone()
	changed := false
	for _, i := range imgs {
		if c.spec.Refs[i].Policy != layout.PolicyMatch {
			c.spec.Refs[i].Policy = layout.PolicyMatch
			changed = true
		}
	}
	if changed {
		f.try(c, DecideImagePolicy, count(len(imgs), "reference image"), "size reference images to the output's area (policy match) before the vision tower and VAE")
	}
	for !f.fits() {
		largest := 0
		for _, i := range imgs {
			rl := f.e.l.Refs[i]
			largest = max(largest, min(rl.Canvas.Width, rl.Canvas.Height))
		}
		limit := largest * 3 / 4 / layout.CanvasMultiple * layout.CanvasMultiple
		if limit < minImageEdge {
			return
		}
		c := f.s.clone()
		for _, i := range imgs {
			c.spec.Refs[i].CapShortEdge = limit
		}
		if !f.try(c, DecideImageCap, count(len(imgs), "reference image"), fmt.Sprintf("down-scale reference images to a %d px short edge before the vision tower and VAE", limit)) {
			return
		}
	}
}

func (f *fitter) clipIndexes() []int {
	var out []int
	for i, r := range f.s.spec.Refs {
		if r.Kind.HasVideo() {
			out = append(out, i)
		}
	}
	return out
}

func (f *fitter) poolClips() {
	clips := f.clipIndexes()
	if len(clips) == 0 {
		return
	}
	target := count(len(clips), "reference clip")
	c := f.s.clone()
	for _, i := range clips {
		c.spec.Refs[i].Pool.Temporal = 2
	}
	f.try(c, DecidePoolTemporal, target, "average pairs of 2-fps Qwen blocks (1 block per 2 s of reference)")
	c = f.s.clone()
	for _, i := range clips {
		c.spec.Refs[i].Pool.Spatial = 2
	}
	f.try(c, DecidePoolSpatial, target, "average 2x2 Qwen vision tokens of reference clips")
}

func (f *fitter) shortenClips() {
	clips := f.clipIndexes()
	if len(clips) == 0 || f.fits() {
		return
	}
	longest := 0
	for _, i := range clips {
		longest = max(longest, f.e.l.Refs[i].Frames)
	}
	var last state
	found := false
	for n := (longest - 1) / clipStep * clipStep; n >= minClipFrames; n -= clipStep {
		c := f.s.clone()
		for _, i := range clips {
			c.spec.Refs[i].MaxFrames = n
		}
		last, found = c, true
		if ce, err := c.evaluate(f.m, f.budget); err == nil && f.fitsWith(ce) {
			break
		}
	}
	if found {
		f.try(last, DecideShortenClips, count(len(clips), "reference clip"),
			fmt.Sprintf("use the first %.0f s of each reference clip", float64(last.spec.Refs[clips[0]].MaxFrames)/layout.FPS))
	}
}

// downscaleClips lowers reference clips' canvases (fewer DiT rows and
// Qwen tokens per frame), a quarter of the short edge at a time.
func (f *fitter) downscaleClips() {
	clips := f.clipIndexes()
	for len(clips) > 0 && !f.fits() {
		largest := 0
		for _, i := range clips {
			c := f.e.l.Refs[i].Canvas
			largest = max(largest, min(c.Width, c.Height))
		}
		limit := largest * 3 / 4 / layout.CanvasMultiple * layout.CanvasMultiple
		if limit < minClipEdge {
			return
		}
		c := f.s.clone()
		for _, i := range clips {
			c.spec.Refs[i].CapShortEdge = limit
		}
		if !f.try(c, DecideClipCanvas, count(len(clips), "reference clip"),
			fmt.Sprintf("down-scale reference clips to a %d px short edge", limit)) {
			return
		}
	}
}

func (f *fitter) fitsWith(e eval) bool {
	return e.peak <= f.budget && (f.limit <= 0 || e.seq <= f.limit)
}

// renderCandidates lists smaller model canvases for an output, largest
// first, down to a quarter of its area: sides multiples of 32 within 2%
// of the output's aspect ratio (the upscale absorbs the difference).
func renderCandidates(out layout.Canvas) []layout.Canvas {
	var cs []layout.Canvas
	aspect := float64(out.Width) / float64(out.Height)
	for h := out.Height - layout.CanvasMultiple; h >= layout.CanvasMultiple; h -= layout.CanvasMultiple {
		w := int(math.Round(float64(h)*aspect/layout.CanvasMultiple)) * layout.CanvasMultiple
		c := layout.Canvas{Width: w, Height: h}
		if w < layout.CanvasMultiple || w > out.Width || 4*c.Pixels() < out.Pixels() {
			continue
		}
		if math.Abs(float64(w)/float64(h)/aspect-1) <= 0.02 {
			cs = append(cs, c)
		}
	}
	return cs
}

// lowerCanvas runs the DiT and VAE on a smaller canvas and upscales the
// frames (h3.c's --render-width/height), choosing the largest that fits.
func (f *fitter) lowerCanvas() {
	cur := f.s.spec.Canvas
	var last state
	found := false
	for _, cv := range renderCandidates(f.s.output) {
		if cv.Pixels() >= cur.Pixels() {
			continue
		}
		c := f.s.clone()
		c.spec.Canvas = cv
		last, found = c, true
		if ce, err := c.evaluate(f.m, f.budget); err == nil && f.fitsWith(ce) {
			break
		}
	}
	if found {
		f.try(last, DecideRenderCanvas, "render canvas",
			fmt.Sprintf("render at %s and upscale the frames to %s", last.spec.Canvas, f.s.output))
	}
}

// report assembles the public plan from the fitted state.
func (f *fitter) report(mc Machine) *Plan {
	l, s := f.e.l, f.s
	p := &Plan{
		Task: l.Task.String(), Partition: l.Task.Partition(), Model: f.m.Name, Machine: mc.Name, Mac: mc.Mac(),
		Canvas: s.output, RenderCanvas: l.Canvas, Frames: l.Frames, Seconds: float64(l.Frames) / layout.FPS,
		TextTokens: TextTokens{Prompt: l.Qwen.PromptTokens(), Labels: l.Qwen.LabelTokens(), Vision: l.Qwen.VisionTokens(),
			Total: l.Qwen.Tokens(), Estimated: s.req.PromptEstimated, Limit: f.limit},
		DiTRows:   l.Counts(),
		Memory:    Memory{BudgetBytes: f.budget, BudgetSource: mc.BudgetSource(), PeakBytes: f.e.peak, PeakPhase: f.e.phase, Phases: f.e.phases},
		Residency: s.knobs,
		Decisions: append([]Decision{}, f.decisions...),
		Verdict:   Fits,
		Time:      estimate(mc, f.m, l, s.knobs, s.estimateInput(f.m)),
		Warnings:  []string{},
		LoRAs:     s.req.LoRAs,
		Layout:    l,
		Spec:      s.spec,
	}
	if p.Model == "dir" {
		p.Model = f.m.Dir
	}
	for i, rl := range l.Refs {
		rp := RefPlan{Kind: rl.Kind.String(), Path: s.req.Refs[i].Path, Canvas: rl.Canvas, QwenTokens: rl.QwenTokens,
			DiTRows: rl.DiTRows, Pool: rl.Pool, Frames: rl.Frames, Seconds: rl.UsedSeconds}
		if rl.Kind != layout.RefAudio && rl.Canvas != rl.Source {
			src := rl.Source
			rp.ScaledFrom = &src
		}
		if rl.Kind != layout.RefAudio && rl.QwenCanvas != rl.Canvas {
			qc := rl.QwenCanvas
			rp.QwenCanvas = &qc
		}
		rp.VAEFrames = rl.VAEFrames
		if rl.Kind.HasAudio() && rl.AudioSeconds > rl.UsedSeconds+0.05 && rl.Kind == layout.RefAudio {
			p.Warnings = append(p.Warnings, fmt.Sprintf("%s: only the first %.1f s of its %.1f s are used (audio is cut to the output's length, and audio inputs total at most 15 s)", filepath.Base(rp.Path), rl.UsedSeconds, rl.AudioSeconds))
		}
		p.References = append(p.References, rp)
	}
	if p.References == nil {
		p.References = []RefPlan{}
	}
	if w := longPromptWarning(l.Qwen.PromptTokens(), p.DiTRows); w != "" {
		p.Warnings = append(p.Warnings, w)
	}
	if s.req.PromptEstimated {
		p.Warnings = append(p.Warnings, fmt.Sprintf("the prompt's %d tokens are estimated without the tokenizer", s.req.PromptTokens))
	}
	if h := p.Time.Seconds / 3600; h >= 1 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("estimated %.1f hours on this machine (%d DiT forwards of %.0f TFLOP)", h, p.Time.Forwards, p.Time.ForwardTFLOP))
	}
	return p
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
