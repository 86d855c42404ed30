package layout

import "math"

// QwenProcessor is the pixel budget of the Qwen3-VL processors that prepare
// vision input in the official pipeline (Hugging Face's image and video
// processors, configured by the snapshot's processor/preprocessor_config.json
// and processor/video_preprocessor_config.json). The processors resize what
// the vision tower sees, independently of the VAE canvas: a small picture is
// upscaled to MinPixels, a long clip shrinks so that all its sampled frames
// together stay within the video budget. A zero field takes the release's
// value.
type QwenProcessor struct {
	ImageMinPixels int `json:"image_min_pixels"` // size.shortest_edge of the image processor
	ImageMaxPixels int `json:"image_max_pixels"` // size.longest_edge of the image processor
	VideoMinPixels int `json:"video_min_pixels"` // size.shortest_edge of the video processor, over all frames
	VideoMaxPixels int `json:"video_max_pixels"` // size.longest_edge of the video processor, over all frames
}

// The release's processor budgets (MiniMax-H3's processor configs).
const (
	releaseImageMinPixels = 65536
	releaseImageMaxPixels = 16777216
	releaseVideoMinPixels = 4096
	releaseVideoMaxPixels = 25165824
	// qwenTemporalPatch is the vision tower's temporal patch: frames per block.
	qwenTemporalPatch = 2
)

// ReleaseQwenProcessor is the budget MiniMax-H3's snapshot declares.
func ReleaseQwenProcessor() QwenProcessor {
	return QwenProcessor{releaseImageMinPixels, releaseImageMaxPixels, releaseVideoMinPixels, releaseVideoMaxPixels}
}

// withDefaults fills zero fields with the release's values.
func (q QwenProcessor) withDefaults() QwenProcessor {
	r := ReleaseQwenProcessor()
	pick := func(v, d int) int {
		if v > 0 {
			return v
		}
		return d
	}
	return QwenProcessor{pick(q.ImageMinPixels, r.ImageMinPixels), pick(q.ImageMaxPixels, r.ImageMaxPixels),
		pick(q.VideoMinPixels, r.VideoMinPixels), pick(q.VideoMaxPixels, r.VideoMaxPixels)}
}

// ImageCanvas is the canvas the image processor resizes a picture of
// canvas c to: c itself when its area is within [ImageMinPixels,
// ImageMaxPixels], else scaled to the bound (HF's smart_resize, factor 32:
// floor when shrinking, ceil when growing).
func (q QwenProcessor) ImageCanvas(c Canvas) Canvas {
	q = q.withDefaults()
	return smartResize(1, c, q.ImageMinPixels, q.ImageMaxPixels)
}

// VideoCanvas is the canvas the video processor resizes a clip's n sampled
// frames on canvas c to: the budget covers all frames together (temporal
// count rounded to the patch of 2), so a long clip is shown smaller.
// Behaviour of Hugging Face transformers 5.17 (the version the fixtures ran):
// the cap is on the total, not per frame.
func (q QwenProcessor) VideoCanvas(c Canvas, n int) Canvas {
	q = q.withDefaults()
	return smartResize(n, c, q.VideoMinPixels, q.VideoMaxPixels)
}

// smartResize is the processors' rule for n frames (1 for an image) of
// canvas c: sides rounded to 32 (ties to even, as Python's round), then
// scaled by the square root of the budget's ratio when the t*h*w volume is
// outside [minPx, maxPx].
func smartResize(n int, c Canvas, minPx, maxPx int) Canvas {
	const f = CanvasMultiple
	h, w := float64(c.Height), float64(c.Width)
	hb := max(f, int(math.RoundToEven(h/f))*f)
	wb := max(f, int(math.RoundToEven(w/f))*f)
	t, tb := float64(n), 1
	if n > 1 {
		tb = int(math.RoundToEven(t/qwenTemporalPatch)) * qwenTemporalPatch
	}
	switch vol := tb * hb * wb; {
	case vol > maxPx:
		beta := math.Sqrt(t * h * w / float64(maxPx))
		hb = max(f, int(math.Floor(h/beta/f))*f)
		wb = max(f, int(math.Floor(w/beta/f))*f)
	case vol < minPx:
		beta := math.Sqrt(float64(minPx) / (t * h * w))
		hb = int(math.Ceil(h*beta/f)) * f
		wb = int(math.Ceil(w*beta/f)) * f
	}
	return Canvas{Width: wb, Height: hb}
}
