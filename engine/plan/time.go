package plan

import (
	"math"

	"h3studio/engine/layout"
)

// Achieved fractions of the matrix peak, fitted to h3.c's M5 Max forward
// times (1.35 s at 512²x22, 109 s at 1344x768x124) and vpipe's M4 Pro
// 960x544x124 (207 s per forward): GEMMs run near peak, attention lower.
const (
	linearEfficiency    = 0.75
	attentionEfficiency = 0.5
)

// Estimate is the time a plan should take on its machine.
type Estimate struct {
	Seconds        float64 `json:"seconds"`
	LoadSeconds    float64 `json:"load_s"`
	TextSeconds    float64 `json:"text_s"`
	DenoiseSeconds float64 `json:"denoise_s"`
	DecodeSeconds  float64 `json:"decode_s"`
	Forwards       int     `json:"forwards"`
	ForwardTFLOP   float64 `json:"forward_tflop"`
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

// estimate prices a plan on a machine; streamed weights cost a disk read
// per pass, overlapped with compute.
func estimate(mc Machine, m Model, l *layout.Layout, k Knobs, steps, reuse, layers int) Estimate {
	d := m.Dims
	ssd := math.Max(mc.SSDGBs, 0.1) * 1e9
	var e Estimate
	e.Forwards = Forwards(steps, reuse)
	fw := ditForward(d, l.Rows, layers)
	e.ForwardTFLOP = (fw.linear + fw.attn) / 1e12
	per := mc.seconds(fw)
	if k.DiT == Streamed {
		per = math.Max(per, float64(int64(layers)*m.DiTBlockBytes())/ssd)
	} else {
		e.LoadSeconds += float64(int64(layers)*m.DiTBlockBytes()) / ssd
	}
	// The AdaLN bake reads every block's projection once.
	e.LoadSeconds += float64(int64(d.Blocks)*m.DiTAdaLNBlockBytes()+m.DiTTrunkBytes()) / ssd
	e.DenoiseSeconds = per * float64(e.Forwards)
	e.TextSeconds = math.Max(mc.seconds(qwenFLOPs(d, l)), float64(m.QwenUsedBytes())/ssd)
	e.DecodeSeconds = mc.seconds(decodeFLOPs(d, l)) + float64(m.VAEDecoderBytes())/ssd
	e.Seconds = e.LoadSeconds + e.TextSeconds + e.DenoiseSeconds + e.DecodeSeconds
	return e
}
