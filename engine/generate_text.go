package engine

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"h3studio/engine/layout"
	"h3studio/engine/textenc"
	"h3studio/engine/weights"
	"h3studio/resample"
)

// textResult is the encode phase's product: the Qwen residual stream and
// the layout re-based on its real length.
type textResult struct {
	out    *textenc.Output
	layout *layout.Layout
}

// encode realises the plan's Qwen presentation with the snapshot's
// tokenizer (the one Plan counted the prompt with) and the prepared pictures, runs the text encoder (vision tower
// and language layers) and releases it. A presentation already encoded in
// this process (same prompt, same inputs) comes from the cache.
func (g *generation) encode(ctx context.Context) error {
	l := g.plan.Layout
	items, err := g.visionItems()
	if err != nil {
		return err
	}
	key := textKey(g.plan.Request.Prompt, l.Qwen, items)
	var out *textenc.Output
	if v, ok := g.e.cache.get(key); ok {
		out = v.(*textenc.Output)
		g.cached = append(g.cached, "text")
	} else {
		if out, err = g.runTextEncoder(ctx, items); err != nil {
			return err
		}
		g.e.cache.put(key, out)
	}
	lay, err := withTextRows(l, out.Tokens)
	if err != nil {
		return err
	}
	if lay.Rows != l.Rows {
		g.e.log.Debug("engine: text rows differ from the plan", "planned", l.Qwen.Tokens(), "realised", out.Tokens)
	}
	g.text = &textResult{out: out, layout: lay}
	return nil
}

func (g *generation) runTextEncoder(ctx context.Context, items []textenc.Item) (*textenc.Output, error) {
	tok, err := g.e.tokenizer()
	if err != nil {
		return nil, err
	}
	_, src, err := g.component(weights.TextEncoder)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	cfg := *g.model().Qwen
	opt := textenc.Options{Residency: g.plan.Residency.TextEncoder, Precision: g.e.precision(), Logger: g.e.log}
	m, err := textenc.New(g.e.backend, src, cfg, opt)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	defer g.timePart("text-encoder", time.Now())
	in, err := m.Realise(tok, g.plan.Layout.Qwen, g.plan.Request.Prompt, items)
	if err != nil {
		return nil, err
	}
	g.tap("qwen.ids", -1, in.IDs)
	g.tap("qwen.tags", -1, in.Tags)
	g.tap("qwen.positions", -1, in.Positions)
	out, err := m.Encode(ctx, in)
	if err == nil {
		g.tap("qwen.hidden", -1, out.Hidden)
	}
	return out, err
}

// visionItems builds one vision item per vision span of the presentation,
// in order: an image (anchor or reference) repeats its frame over the
// tower's temporal patch; a clip block takes the frames the span lists.
// Pixels are brought from the decoded canvas to the span's (the Qwen
// processor's resize) as the processors do it.
func (g *generation) visionItems() ([]textenc.Item, error) {
	var items []textenc.Item
	for _, sp := range g.plan.Layout.Qwen.Spans {
		if !sp.Kind.IsVision() {
			continue
		}
		if sp.Ref < 0 || sp.Ref >= len(g.inputs) || g.inputs[sp.Ref] == nil {
			return nil, fmt.Errorf("vision block of input %d has no decoded input", sp.Ref+1)
		}
		in := g.inputs[sp.Ref]
		if in.canvas != sp.Source {
			return nil, fmt.Errorf("input %d decoded on %s, its vision block wants %s", sp.Ref+1, in.canvas, sp.Source)
		}
		it := textenc.Item{Height: sp.Canvas.Height, Width: sp.Canvas.Width, Pool: sp.Pool}
		view := func(px []float32) ([]float32, error) { return qwenView(px, sp.Source, sp.Canvas) }
		if sp.Kind == layout.SpanImage {
			px, err := view(in.still)
			if err != nil {
				return nil, err
			}
			it.Frames = [][]float32{px, px}
		} else {
			for _, f := range sp.Frames {
				px, ok := in.samples[f]
				if !ok {
					return nil, fmt.Errorf("input %d: frame %d was not sampled", sp.Ref+1, f)
				}
				px, err := view(px)
				if err != nil {
					return nil, err
				}
				it.Frames = append(it.Frames, px)
			}
		}
		items = append(items, it)
	}
	return items, nil
}

// qwenView resizes one decoded picture ([3][H][W] in [0, 1], exact
// multiples of 1/255) from canvas src to dst the way Hugging Face's Qwen
// processors do on the CPU (where the official pipeline runs them):
// torchvision's antialiased bicubic on 8-bit pixels, ATen's integer kernel.
// The same canvas is returned as is.
func qwenView(px []float32, src, dst layout.Canvas) ([]float32, error) {
	if src == dst {
		return px, nil
	}
	n := src.Width * src.Height
	rgb := resample.NewRGB(src.Width, src.Height)
	for i := 0; i < n; i++ {
		for ch := 0; ch < 3; ch++ {
			rgb.Pix[3*i+ch] = uint8(math.Round(float64(px[ch*n+i]) * 255))
		}
	}
	out, err := resample.BicubicAAUint8(rgb, dst.Width, dst.Height)
	if err != nil {
		return nil, err
	}
	return planar(Pixels{Width: out.Width, Height: out.Height, RGB: out.Pix}, 1.0/255, 0), nil
}

// textKey identifies a presentation by content: the prompt, every span,
// and every vision item's pixels.
func textKey(prompt string, p layout.Presentation, items []textenc.Item) string {
	h := sha256.New()
	fmt.Fprintf(h, "text|%q|", prompt)
	for _, sp := range p.Spans {
		fmt.Fprintf(h, "%d|%q|%d|%d|%d|%v|%v|", sp.Kind, sp.Text, sp.Ref, sp.GridH, sp.GridW, sp.Frames, sp.Pool)
	}
	var b [4]byte
	for _, it := range items {
		fmt.Fprintf(h, "item|%d|%d|%v|", it.Width, it.Height, it.Pool)
		for _, f := range it.Frames {
			for _, v := range f {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
				h.Write(b[:])
			}
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// withTextRows returns the layout with its text segment resized to the
// realised Qwen length n. The planner counts labels with the release
// vocabulary; a checkpoint whose tokenizer splits them differently (the
// tiny model's) yields another length, and the release's rule is that the
// media cursor starts at text_len, so every later segment moves by the
// difference in both its first row and its RoPE time.
func withTextRows(l *layout.Layout, n int) (*layout.Layout, error) {
	if len(l.Segments) == 0 || l.Segments[0].Kind != layout.SegText {
		return nil, fmt.Errorf("layout does not start with text rows")
	}
	d := n - l.Segments[0].Rows
	if d == 0 {
		return l, nil
	}
	out := *l
	out.Segments = append([]layout.Segment(nil), l.Segments...)
	out.Segments[0].Rows = n
	for i := 1; i < len(out.Segments); i++ {
		out.Segments[i].Start += d
		out.Segments[i].T0 += float64(d)
	}
	out.Rows += d
	return &out, nil
}
