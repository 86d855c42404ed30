package textenc

import (
	"fmt"

	"h3studio/engine/layout"
	"h3studio/engine/tokenizer"
)

// Realise turns a planned presentation (engine/layout) into the encoder's
// input. Label spans and the prompt are tokenized (no chat template, no
// special tokens; an empty prompt alone becomes <|endoftext|>); each vision
// span becomes <|vision_start|>, one pad per token of its pooled grid,
// <|vision_end|>. Positions and DiT tags follow the realised token counts
// with layout's rule, and items (one per vision span, in order) must yield
// exactly the span's grid.
func (m *Model) Realise(tok *tokenizer.Tokenizer, p layout.Presentation, prompt string, items []Item) (Input, error) {
	ids, err := specialIDs(tok)
	if err != nil {
		return Input{}, err
	}
	if want := [4]int{m.cfg.VisionStart, m.cfg.VisionEnd, m.cfg.ImageToken, m.cfg.VideoToken}; [4]int{ids.start, ids.end, ids.image, ids.video} != want {
		return Input{}, fmt.Errorf("textenc: tokenizer vision ids %v differ from the config's %v: tokenizer and text encoder come from different checkpoints",
			[4]int{ids.start, ids.end, ids.image, ids.video}, want)
	}
	var in Input
	rp := layout.Presentation{Spans: append([]layout.Span(nil), p.Spans...)}
	k := 0
	for i := range rp.Spans {
		sp := &rp.Spans[i]
		switch {
		case sp.Kind.IsVision():
			if k >= len(items) {
				return Input{}, fmt.Errorf("textenc: the presentation has more vision blocks than the %d items given", len(items))
			}
			if n := visionTokens(m.cfg.Vision, items[k]); n != sp.GridH*sp.GridW {
				return Input{}, fmt.Errorf("textenc: vision block %d is planned as %dx%d tokens but its %dx%d item gives %d",
					k, sp.GridH, sp.GridW, items[k].Width, items[k].Height, n)
			}
			pad := ids.image
			if sp.Kind == layout.SpanVideo {
				pad = ids.video
			}
			in.IDs = append(in.IDs, int32(ids.start))
			for j := 0; j < sp.GridH*sp.GridW; j++ {
				in.IDs = append(in.IDs, int32(pad))
			}
			in.IDs = append(in.IDs, int32(ids.end))
			sp.Tokens = sp.GridH*sp.GridW + 2
			k++
		default:
			text := sp.Text
			if sp.Kind == layout.SpanPrompt {
				text = prompt
			}
			t := tok.Encode(text)
			if len(t) == 0 && sp.Kind == layout.SpanPrompt && len(rp.Spans) == 1 {
				t = []int{ids.pad}
			}
			for _, id := range t {
				in.IDs = append(in.IDs, int32(id))
			}
			if len(t) != sp.Tokens {
				m.opts.Logger.Debug("textenc: realised span length differs from the plan", "span", sp.Kind.String(), "text", sp.Text, "planned", sp.Tokens, "tokens", len(t))
			}
			sp.Tokens = len(t)
		}
	}
	if k != len(items) {
		return Input{}, fmt.Errorf("textenc: %d vision items given for %d vision blocks", len(items), k)
	}
	in.Items = items
	in.Positions = rp.Positions()
	in.Tags = rp.Modalities()
	return in, nil
}

type visionIDs struct{ pad, start, end, image, video int }

func specialIDs(tok *tokenizer.Tokenizer) (visionIDs, error) {
	var v visionIDs
	for _, s := range []struct {
		dst  *int
		name string
	}{{&v.pad, tokenizer.EndOfText}, {&v.start, tokenizer.VisionStart}, {&v.end, tokenizer.VisionEnd},
		{&v.image, tokenizer.ImagePad}, {&v.video, tokenizer.VideoPad}} {
		id, err := tok.ID(s.name)
		if err != nil {
			return v, err
		}
		*s.dst = id
	}
	return v, nil
}
