package plan

import (
	"math"

	"h3studio/engine/arch"
	"h3studio/engine/layout"
)

// Achieved fractions of the matrix peak, fitted to h3.c's M5 Max forward
// times (1.35 s at 512²x22, 109 s at 1344x768x124) and vpipe's M4 Pro
// 960x544x124 (207 s per forward): GEMMs run near peak, attention lower.
const (
	linearEfficiency    = 0.75
	attentionEfficiency = 0.5
)

// Estimate is the time a plan should take on its machine: every phase the
// engine and the muxer run, costed by one formula (phaseSeconds) from the
// phase's work and the machine's Rates.
type Estimate struct {
	Seconds float64 `json:"seconds"`
	// Phases lists references, encode, denoise, decode and mux in the
	// order they run, each with its work and seconds.
	Phases []PhaseCost `json:"phases"`
	// Source says where the rates came from: "peak" (the chip's datasheet
	// peak, before any measurement), "calibration" or "history".
	Source       string  `json:"source"`
	Forwards     int     `json:"forwards"`
	ForwardTFLOP float64 `json:"forward_tflop"`
}

// Phase returns the cost of the named phase (zero when the plan has none).
func (e Estimate) Phase(name string) PhaseCost {
	for _, pc := range e.Phases {
		if pc.Phase == name {
			return pc
		}
	}
	return PhaseCost{Phase: name}
}

// PhaseCost is one phase of an Estimate. Work is in the phase's unit (see
// Rates); Seconds is what the time model makes of it.
type PhaseCost struct {
	Phase   string  `json:"phase"`
	Work    float64 `json:"work"`
	Unit    string  `json:"unit"`
	Seconds float64 `json:"seconds"`
	// ClipWork is the part of a references phase's Work that is reference
	// clips, priced at the clip rate (TimeReferenceClips).
	ClipWork float64 `json:"clip_work,omitempty"`
}

// Where an Estimate's rates came from (Estimate.Source, Rates.Source).
const (
	SourcePeak        = "peak"
	SourceCalibration = "calibration"
	SourceHistory     = "history"
)

// The engine's phases as the estimate names them (engine.Phase values).
const (
	TimeReferences = "references"
	TimeEncode     = "encode"
	TimeDenoise    = "denoise"
	TimeDecode     = "decode"
	TimeMux        = "mux"
)

// TimePhases are the costed phases in the order they run.
var TimePhases = []string{TimeReferences, TimeEncode, TimeDenoise, TimeDecode, TimeMux}

// TimeReferenceClips is the reference clips' video-VAE encode, a part of
// the references phase that the engine times on its own (engine.Stats
// Parts) and the planner prices at its own rate: a clip's frames went
// through the encoder 2.5x slower per pixel than pictures on the 2-core
// CPU (the tiny model: a 3 s 320x256 clip took 544 s where pictures
// priced it at 2 s per Mpx-frame), so one rate for both put a first
// render with a clip 60 % over its estimate.
const TimeReferenceClips = "reference-clips"

// RatedPhases are the keys of Rates.Phases: the phases and the clips.
var RatedPhases = append(append([]string(nil), TimePhases...), TimeReferenceClips)

// Work units. Convolutional stages (FFmpeg decode and resize, the VAEs,
// the H.264 encode) cost the same per pixel at any size, so they are
// counted in megapixel-frames; the transformers' attention grows with the
// square of the sequence, so they are counted in effective TFLOP (attention
// weighted by how much slower it runs than a GEMM).
const (
	UnitMegapixels = "Mpx"
	UnitTFLOP      = "TFLOP"
)

// Rate is one phase's measured speed: FixedSeconds per run (opening its
// weights, starting FFmpeg, building graphs) plus Work / PerSecond.
type Rate struct {
	FixedSeconds float64 `json:"fixed_s"`
	PerSecond    float64 `json:"work_per_s"`
}

// Rates are a machine's measured throughputs, one Rate per TimePhases
// entry, fed into the one time formula. What each is measured on:
//   - references: megapixel-frames of the pictures and anchors the engine
//     decodes and video-VAE-encodes (cached references count nothing),
//     timed over the references phase less its clips;
//   - reference-clips: megapixel-frames the encoder runs for reference
//     clips (whole 17-frame chunks of the clip's canvas), timed over the
//     clips' encodes;
//   - encode: effective TFLOP of Qwen3-VL over the planned sequence,
//     timed over the encode phase (text and vision towers);
//   - denoise: effective TFLOP of every DiT forward, timed over the
//     denoise phase;
//   - decode: megapixel-frames of the model canvas the video VAE decodes,
//     timed over the decode phase (the audio VAE decode included);
//   - mux: megapixel-frames of the output canvas FFmpeg encodes to H.264,
//     timed over the mux phase.
//
// app measures them on first start (a calibration render) and refines them
// from finished jobs; a zero Rate falls back to the chip's peak.
type Rates struct {
	Source string          `json:"source"`
	Phases map[string]Rate `json:"phases"`
}

// Sample is one measured phase: its planned work and its wall time.
type Sample struct {
	Work    float64 `json:"work"`
	Seconds float64 `json:"seconds"`
}

// FitRate fits seconds = fixed + work/rate to samples by least squares,
// keeping both terms non-negative: with one sample, or samples of one work,
// the time is all rate (fixed 0); a negative fitted intercept is refitted
// through the origin, a negative slope becomes a constant.
func FitRate(samples []Sample) Rate {
	var n, sw, ss, sww, sws float64
	for _, s := range samples {
		if s.Seconds < 0 || s.Work < 0 {
			continue
		}
		n++
		sw += s.Work
		ss += s.Seconds
		sww += s.Work * s.Work
		sws += s.Work * s.Seconds
	}
	if n == 0 {
		return Rate{}
	}
	through0 := func() Rate {
		if sws <= 0 {
			return Rate{FixedSeconds: ss / n}
		}
		return Rate{PerSecond: sww / sws}
	}
	den := n*sww - sw*sw
	if den <= 1e-12*n*sww {
		return through0()
	}
	slope := (n*sws - sw*ss) / den
	fixed := (ss - slope*sw) / n
	switch {
	case slope <= 0:
		return Rate{FixedSeconds: ss / n}
	case fixed < 0:
		return through0()
	}
	return Rate{FixedSeconds: fixed, PerSecond: 1 / slope}
}

// phaseSeconds is the time formula: a measured rate when there is one,
// else the peak-based fallback.
func phaseSeconds(r Rate, work, fallback float64) float64 {
	if r.PerSecond <= 0 && r.FixedSeconds <= 0 {
		return fallback
	}
	s := r.FixedSeconds
	if r.PerSecond > 0 {
		s += work / r.PerSecond
	}
	return s
}

// Forwards is the number of DiT evaluations for steps with whole-denoiser
// reuse k: step 0, every k-th step and the last (h3.c: 20 steps give 20,
// 11 and 8 evaluations at k = 1, 2, 3).
func Forwards(steps, reuse int) int {
	if reuse <= 1 {
		return steps
	}
	n := 0
	for s := 0; s < steps; s++ {
		if s%reuse == 0 || s == steps-1 {
			n++
		}
	}
	return n
}

// flops is linear and attention work in FLOP.
type flops struct{ linear, attn float64 }

func (f flops) add(g flops) flops { return flops{f.linear + g.linear, f.attn + g.attn} }

// ditForward is one DiT forward over n rows and the given active blocks:
// 2 FLOP per weight per row on the 385 M per-block linears plus 4·n²·inner
// for attention (AdaLN is precomputed).
func ditForward(d Dims, n, layers int) flops {
	N := float64(n)
	return flops{
		linear: float64(layers) * 2 * N * float64(d.CoreBlockParams()),
		attn:   float64(layers) * 4 * N * N * float64(d.Heads*d.HeadDim),
	}
}

// qwenFLOPs is the language model over T tokens (causal: half the scores)
// plus the vision tower over every vision block.
func qwenFLOPs(d Dims, l *layout.Layout) flops {
	T := float64(l.Qwen.Tokens())
	f := flops{
		linear: 2 * T * float64(int64(d.QLayersUsed)*d.QLayerParams()),
		attn:   2 * T * T * float64(d.QHeads*d.QHeadDim*d.QLayersUsed),
	}
	for _, sp := range l.Qwen.Spans {
		if sp.Kind.IsVision() {
			p := 4 * float64(sp.Canvas.Tokens())
			f = f.add(flops{2 * p * float64(d.VisionParams()), 4 * p * p * float64(d.VHidden*d.VLayers)})
		}
	}
	return f
}

// decodeFLOPs is the ViT3D decoder over 256-px tiles (64-px overlap) and
// 7-latent windows: ≈87 TFLOP at 512²x22.
func decodeFLOPs(d Dims, l *layout.Layout) flops {
	tiles := func(px int) float64 {
		if px <= vaeTile {
			return 1
		}
		return math.Ceil(float64(px-64) / float64(vaeTile-64))
	}
	calls := math.Max(1, float64((l.Frames-5)/17)) * tiles(l.Canvas.Width) * tiles(l.Canvas.Height)
	s := float64(vaeChunk)*float64(tilePixels(l.Canvas, vaeTile))/256 + 5
	return flops{
		linear: calls * 2 * s * float64(d.VAEDecParams),
		attn:   calls * 4 * s * s * float64(d.DecDim*d.DecBlocks),
	}
}

func (m Machine) seconds(f flops) float64 {
	tf := math.Max(m.MatrixTFLOPS, 1e-3) * 1e12
	return f.linear/(tf*linearEfficiency) + f.attn/(tf*attentionEfficiency)
}

// effectiveTFLOP weighs attention FLOP by how much slower than a GEMM it
// runs, so one rate prices both.
func (f flops) effectiveTFLOP() float64 {
	return (f.linear + f.attn*linearEfficiency/attentionEfficiency) / 1e12
}

// Peak fallbacks for the pixel phases, used only before any measurement:
// what a single CPU core of a 2020s laptop does per second (FFmpeg decode
// and Lanczos resize plus a tiny VAE; H.264 veryfast).
const (
	fallbackReferenceMpxPerS = 2.0
	fallbackMuxMpxPerS       = 40.0
)

// megapixelFrames is a canvas over n frames in Mpx.
func megapixelFrames(c layout.Canvas, n int) float64 {
	return float64(c.Width) * float64(c.Height) * float64(max(n, 1)) / 1e6
}

// referenceWork is the pixels the references phase encodes: every anchor
// and every visual reference not cached (skip[i]), pictures apart from
// clips, each as the video VAE's tiles cover it (whole tiles, overlaps
// counted twice) and a clip over the frames of the encoder chunks it
// fills that the encoder runs (arch.EncodedFrames).
func referenceWork(l *layout.Layout, d Dims, anchors int, skip []bool) (pictures, clips float64) {
	pictures = float64(anchors) * d.encodedMpx(l.Canvas, 1)
	for i, r := range l.Refs {
		if i < len(skip) && skip[i] || r.Canvas.Width == 0 {
			continue
		}
		n := r.VAEFrames // what the encoder sees of the decoded frames
		if n == 0 {
			n = r.Frames
		}
		if n <= 1 {
			pictures += d.encodedMpx(r.Canvas, 1)
			continue
		}
		if c := d.VAEClipLength; c > 0 {
			n = arch.EncodedFrames(n, c, max(d.VAETimeRatio, 1), d.VAETokenDrop)
		}
		clips += d.encodedMpx(r.Canvas, n)
	}
	return pictures, clips
}

// encodedMpx is the megapixel-frames the video VAE encoder runs for n
// frames of canvas c: its tiles' area, not the canvas's.
func (d Dims) encodedMpx(c layout.Canvas, n int) float64 {
	axis := func(px int) int {
		if d.VAETile <= 0 || px <= d.VAETile {
			return px
		}
		return arch.TileCount(px, d.VAETile, d.VAETileOverlap) * d.VAETile
	}
	return float64(axis(c.Width)) * float64(axis(c.Height)) * float64(max(n, 1)) / 1e6
}

// referenceSeconds prices the references phase: pictures at the phase's
// rate (which holds the phase's fixed cost), clips at the clip rate, or
// at the pictures' where no clip has been measured yet.
func referenceSeconds(pictures, clips float64, refs, clip Rate) float64 {
	if pictures+clips == 0 {
		return 0 // nothing to do: the engine skips the phase's loads too
	}
	s := phaseSeconds(refs, pictures, pictures/fallbackReferenceMpxPerS)
	switch {
	case clips == 0:
	case clip.PerSecond > 0:
		s += clips / clip.PerSecond
	case refs.PerSecond > 0:
		s += clips / refs.PerSecond
	default:
		s += clips / fallbackReferenceMpxPerS
	}
	return s
}

// estimate prices a plan on a machine; streamed weights cost a disk read
// per pass, overlapped with compute. Weight loading is inside each phase,
// as the engine runs it (a measured rate's FixedSeconds holds it).
func estimate(mc Machine, m Model, l *layout.Layout, k Knobs, in estimateInput) Estimate {
	d := m.Dims
	ssd := math.Max(mc.SSDGBs, 0.1) * 1e9
	e := Estimate{Forwards: Forwards(in.steps, in.reuse), Source: SourcePeak}
	rate := func(string) Rate { return Rate{} }
	if mc.Rates != nil {
		e.Source = mc.Rates.Source
		rate = func(p string) Rate { return mc.Rates.Phases[p] }
	}
	fw := ditForward(d, l.Rows, in.layers)
	if _, rp := loraCost(in.loras); rp > 0 && d.Blocks > 0 { // the side paths of the active blocks
		fw.linear += 2 * float64(l.Rows) * float64(rp) * float64(in.layers) / float64(d.Blocks)
	}
	e.ForwardTFLOP = (fw.linear + fw.attn) / 1e12
	load := float64(int64(d.Blocks)*m.DiTAdaLNBlockBytes()+m.DiTTrunkBytes()) / ssd
	per := mc.seconds(fw)
	if k.DiT == Streamed {
		per = math.Max(per, float64(int64(in.layers)*m.DiTBlockBytes())/ssd)
	} else {
		load += float64(int64(in.layers)*m.DiTBlockBytes()) / ssd
	}
	pics, clips := referenceWork(l, d, in.anchors, in.cachedRefs)
	qwen := qwenFLOPs(d, l)
	textWork, textPeak := qwen.effectiveTFLOP(), math.Max(mc.seconds(qwen), float64(m.QwenUsedBytes())/ssd)
	if in.cachedText {
		textWork, textPeak = 0, 0
	}
	dec := megapixelFrames(l.Canvas, l.Frames)
	mux := megapixelFrames(in.output, l.Frames)
	rs := referenceSeconds(pics, clips, rate(TimeReferences), rate(TimeReferenceClips))
	e.Phases = append(e.Phases, PhaseCost{Phase: TimeReferences, Work: pics + clips, Unit: UnitMegapixels, Seconds: rs, ClipWork: clips})
	e.Seconds += rs
	for _, pc := range []struct {
		phase, unit    string
		work, fallback float64
	}{
		{TimeEncode, UnitTFLOP, textWork, textPeak},
		{TimeDenoise, UnitTFLOP, fw.effectiveTFLOP() * float64(e.Forwards), load + per*float64(e.Forwards)},
		{TimeDecode, UnitMegapixels, dec, mc.seconds(decodeFLOPs(d, l)) + float64(m.VAEDecoderBytes())/ssd},
		{TimeMux, UnitMegapixels, mux, mux / fallbackMuxMpxPerS},
	} {
		s := phaseSeconds(rate(pc.phase), pc.work, pc.fallback)
		if pc.work == 0 && pc.phase != TimeDenoise && pc.phase != TimeDecode && pc.phase != TimeMux {
			s = 0 // nothing to do: the engine skips the phase's loads too
		}
		e.Phases = append(e.Phases, PhaseCost{Phase: pc.phase, Work: pc.work, Unit: pc.unit, Seconds: s})
		e.Seconds += s
	}
	return e
}

// estimateInput is what estimate reads beyond the layout.
type estimateInput struct {
	steps, reuse, layers int
	anchors              int           // FL2VA keyframes decoded
	output               layout.Canvas // the muxed canvas
	cachedRefs           []bool        // references an earlier generation prepared
	cachedText           bool
	loras                []LoRA
}
