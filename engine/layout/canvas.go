// Package layout is the pure arithmetic of a MiniMax-H3 request: canvas and
// frame rules, per-reference canvases, the Qwen3-VL presentation (labels,
// vision blocks, timestamps) and the DiT's packed row layout with the RoPE
// position of every row. It holds no tensors and imports no cgo package, so
// the planner, the UI and the engine all count rows from the same code.
//
// References: MiniMax-H3's official pipeline (as served by SGLang and
// ComfyUI) for the rules; antirez/h3.c where it departs (noted per item).
package layout

import (
	"fmt"
	"math"
	"strconv"
)

const (
	// CanvasMultiple is the pixel granularity of every canvas: one DiT row
	// (a 2x2 patch of 16x-downsampled latents) and one merged Qwen vision
	// token both cover 32x32 pixels.
	CanvasMultiple = 32
	// MaxCanvasPixels is the release's area cap, 768x1344.
	MaxCanvasPixels = 768 * 1344
	// canvasShortEdge is the official resolver's nominal short edge.
	canvasShortEdge = 768
	// maxAspect bounds reference images to 1:4..4:1.
	maxAspect = 4.0
	// maxShortEdgePolicy is the `max` policy's short edge (and the short
	// edge `official` forces, upscaling included).
	maxShortEdgePolicy = 2048
)

// Canvas is a pixel size. A valid model canvas has both sides multiples of
// 32 and at most MaxCanvasPixels pixels.
type Canvas struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

func (c Canvas) String() string { return fmt.Sprintf("%dx%d", c.Width, c.Height) }

// Pixels is the canvas area.
func (c Canvas) Pixels() int { return c.Width * c.Height }

// Tokens is the number of 32x32 cells: DiT rows per latent frame, and merged
// Qwen vision tokens per image or video block on this canvas.
func (c Canvas) Tokens() int { return (c.Width / CanvasMultiple) * (c.Height / CanvasMultiple) }

// LatentW and LatentH are the video-VAE latent sizes (16x spatial).
func (c Canvas) LatentW() int { return c.Width / 16 }

// LatentH is the latent height; see LatentW.
func (c Canvas) LatentH() int { return c.Height / 16 }

// ValidateModel checks a canvas the DiT and VAE can run on; a canvas it
// refuses breaks a rule of the model, so the error is a *LimitError.
func (c Canvas) ValidateModel() error {
	switch {
	case c.Width < CanvasMultiple || c.Height < CanvasMultiple:
		return limitf("canvas %s is too small; width and height must be at least %d", c, CanvasMultiple)
	case c.Width%CanvasMultiple != 0 || c.Height%CanvasMultiple != 0:
		return limitf("canvas %s: width and height must be multiples of %d (try %s)", c, CanvasMultiple, RoundCanvas(c))
	case c.Pixels() > MaxCanvasPixels:
		return limitf("canvas %s has %s pixels, over the model's cap of 768x1344 = %s (try %s)", c, Grouped(c.Pixels()), Grouped(MaxCanvasPixels), AdaptCanvas(c))
	}
	return nil
}

// Grouped prints n with thousands separators, for the limits people read:
// a pixel or token count of seven digits is unreadable without them.
func Grouped(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// RoundCanvas rounds each side up to a multiple of 32 (vpipe's rule).
func RoundCanvas(c Canvas) Canvas {
	up := func(v int) int { return max(CanvasMultiple, (v+CanvasMultiple-1)/CanvasMultiple*CanvasMultiple) }
	return Canvas{up(c.Width), up(c.Height)}
}

// round32 rounds to the nearest multiple of 32 (ties to even, as C's
// nearbyint in the reference resolvers), at least 32.
func round32(v float64) int {
	return max(CanvasMultiple, int(math.RoundToEven(v/CanvasMultiple))*CanvasMultiple)
}

// AdaptCanvas is the official canvas resolver: short edge 768 at the
// source's aspect ratio, scaled down to the area cap, each side rounded to
// 32. Rounding may land slightly above the cap, as in the release.
func AdaptCanvas(src Canvas) Canvas {
	ratio := float64(src.Width) / float64(src.Height)
	w, h := canvasShortEdge*ratio, float64(canvasShortEdge)
	if ratio < 1 {
		w, h = canvasShortEdge, canvasShortEdge/ratio
	}
	if area := w * h; area > MaxCanvasPixels {
		s := math.Sqrt(MaxCanvasPixels / area)
		w, h = w*s, h*s
	}
	return Canvas{round32(w), round32(h)}
}

// ImagePolicy chooses a Ref2VA image's encode canvas.
type ImagePolicy int

const (
	// PolicyMatch scales down only, to the target's area, aspect kept
	// (h3.c and ComfyUI default). Tokens do not depend on the source size.
	PolicyMatch ImagePolicy = iota
	// PolicyMax scales down only, to a 2048-pixel short edge.
	PolicyMax
	// PolicyOfficial forces a 2048-pixel short edge, upscaling included
	// (the released diffusers behaviour, SGLang's compatibility default).
	PolicyOfficial
)

var policyNames = [...]string{"match", "max", "official"}

func (p ImagePolicy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("ImagePolicy(%d)", int(p))
}

// ParseImagePolicy reads "match", "max" or "official" ("diffusers" is an alias).
func ParseImagePolicy(s string) (ImagePolicy, error) {
	for i, n := range policyNames {
		if s == n {
			return ImagePolicy(i), nil
		}
	}
	if s == "diffusers" {
		return PolicyOfficial, nil
	}
	return 0, fmt.Errorf("layout: unknown reference image policy %q (want match, max or official)", s)
}

// RefImageCanvas is the canvas an image reference is resized to before both
// the VAE encoder and the vision tower. capShortEdge, when positive, further
// limits the short edge (the planner's down-scaling lever).
func RefImageCanvas(src, target Canvas, p ImagePolicy, capShortEdge int) Canvas {
	short := float64(min(src.Width, src.Height))
	var scale float64
	switch p {
	case PolicyMax:
		scale = math.Min(1, maxShortEdgePolicy/short)
	case PolicyOfficial:
		scale = maxShortEdgePolicy / short
	default:
		scale = math.Min(1, math.Sqrt(float64(target.Pixels())/float64(src.Pixels())))
	}
	if capShortEdge > 0 {
		scale = math.Min(scale, float64(capShortEdge)/short)
	}
	return Canvas{round32(float64(src.Width) * scale), round32(float64(src.Height) * scale)}
}

// ClipPolicy chooses a reference clip's canvas.
type ClipPolicy int

const (
	// ClipOfficial is the official resolver at the clip's aspect ratio, a
	// smaller clip enlarged (SGLang's pre-queue admission: a 1280x720 clip
	// is encoded at 1344x768).
	ClipOfficial ClipPolicy = iota
	// ClipSource never enlarges a clip: a smaller one keeps its own size,
	// rounded to 32 (h3.c and ComfyUI; cheaper for small clips).
	ClipSource
)

var clipPolicyNames = [...]string{"official", "source"}

func (p ClipPolicy) String() string {
	if int(p) < len(clipPolicyNames) {
		return clipPolicyNames[p]
	}
	return fmt.Sprintf("ClipPolicy(%d)", int(p))
}

// ParseClipPolicy reads "official" or "source".
func ParseClipPolicy(s string) (ClipPolicy, error) {
	for i, n := range clipPolicyNames {
		if s == n {
			return ClipPolicy(i), nil
		}
	}
	return 0, fmt.Errorf("layout: unknown reference clip sizing %q (want official or source)", s)
}

// RefVideoCanvas is a video reference's canvas under policy p.
func RefVideoCanvas(src Canvas, p ClipPolicy) Canvas {
	c := AdaptCanvas(src)
	if p == ClipSource && src.Pixels() < c.Pixels() {
		return Canvas{round32(float64(src.Width)), round32(float64(src.Height))}
	}
	return c
}

// RefCanvas is the canvas a picture or clip reference is resized to
// before the VAE encoder and the vision tower: its policy's canvas, its
// short edge then capped by the planner's lever (r.CapShortEdge) and the
// model's declared reference short edge (modelShortEdge; 0 declares none,
// and the release's sizing is unchanged). The planner, and through the
// plan the engine and the estimate, size references only here.
func RefCanvas(r Ref, target Canvas, modelShortEdge int) Canvas {
	limit := r.CapShortEdge
	if modelShortEdge > 0 && (limit <= 0 || modelShortEdge < limit) {
		limit = modelShortEdge
	}
	if !r.Kind.HasVideo() {
		return RefImageCanvas(r.Source, target, r.Policy, limit)
	}
	c := RefVideoCanvas(r.Source, r.ClipPolicy)
	if limit > 0 && min(c.Width, c.Height) > limit {
		c = RefImageCanvas(c, c, PolicyMax, limit)
	}
	return c
}

// ScaleCanvas returns the largest canvas with the same aspect ratio as c,
// sides multiples of 32, whose area is at most frac of c's. It is how a
// lower render canvas (h3.c's --render-width/height) is chosen.
func ScaleCanvas(c Canvas, frac float64) Canvas {
	g := gcd(c.Width/CanvasMultiple, c.Height/CanvasMultiple)
	uw, uh := c.Width/g, c.Height/g // smallest same-aspect step, multiples of 32
	k := int(math.Floor(math.Sqrt(frac) * float64(g)))
	if k < 1 {
		k = 1
	}
	return Canvas{uw * k, uh * k}
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func aspectOK(c Canvas) bool {
	r := float64(c.Width) / float64(c.Height)
	return r <= maxAspect && r >= 1/maxAspect
}
