package layout

import "testing"

// The processors' budgets against Hugging Face's Qwen2-VL image and Qwen3-VL
// video processors at the release's sizes (the parity audit's experiment E5,
// transformers 5.17): a 192x160 picture is upscaled to 288x256 (72 tokens,
// not 30), a 288x192 one to 320x224 (70), and 31 samples of a 1344x768 clip
// shrink to 1184x672 (777 tokens a block, not 1008), while 25 samples fit.
func TestQwenProcessorBudgets(t *testing.T) {
	q := QwenProcessor{} // zero: the release's
	for _, c := range []struct {
		in   Canvas
		want int
	}{{Canvas{192, 160}, 72}, {Canvas{288, 192}, 70}, {Canvas{256, 256}, 64}, {Canvas{1344, 768}, 1008}, {Canvas{2048, 2720}, 5440}} {
		if got := q.ImageCanvas(c.in).Tokens(); got != c.want {
			t.Errorf("image %v: %v = %d tokens, want %d", c.in, q.ImageCanvas(c.in), got, c.want)
		}
	}
	for _, c := range []struct {
		n    int
		want int
	}{{31, 777}, {25, 1008}, {16, 1008}, {2, 1008}} {
		if got := q.VideoCanvas(Canvas{1344, 768}, c.n).Tokens(); got != c.want {
			t.Errorf("%d samples of 1344x768: %v = %d tokens a block, want %d", c.n, q.VideoCanvas(Canvas{1344, 768}, c.n), got, c.want)
		}
	}
	// A snapshot's own budget wins over the release's.
	small := QwenProcessor{ImageMaxPixels: 256 * 256}
	if got := small.ImageCanvas(Canvas{1344, 768}); got.Pixels() > 256*256 {
		t.Errorf("a 65536-pixel cap gave %v", got)
	}
}
