package textenc

import (
	"context"
	"fmt"

	"h3studio/engine/layout"
)

// Input is a realised presentation: the token ids the language model
// reads, their mRoPE positions, and one vision item per run of image/video
// pad tokens, in sequence order.
type Input struct {
	IDs       []int32
	Positions [][3]int
	Items     []Item
	// Tags is each token's DiT modality (vision blocks, delimiters
	// included, are video; the rest text); Realise fills it.
	Tags []layout.Modality
}

// Output is the raw residual stream after the last layer run, one row per
// token (no final norm: MiniMax-H3 reads it unnormalised).
type Output struct {
	Hidden []float32 // row-major [Tokens, Width]
	Tokens int
	Width  int
	Tags   []layout.Modality // the input's tags, one per row
}

// padRun is one vision block's run of pad tokens.
type padRun struct{ start, n int }

func (m *Model) padRuns(ids []int32) []padRun {
	var runs []padRun
	isPad := func(id int32) bool { return int(id) == m.cfg.ImageToken || int(id) == m.cfg.VideoToken }
	for i := 0; i < len(ids); {
		if !isPad(ids[i]) {
			i++
			continue
		}
		j := i
		for j < len(ids) && ids[j] == ids[i] {
			j++
		}
		runs = append(runs, padRun{i, j - i})
		i = j
	}
	return runs
}

// Encode runs the vision tower over in.Items, splices the merged tokens at
// the pad runs, and runs the language layers, adding the deepstack
// features at the vision rows after the first layers.
func (m *Model) Encode(ctx context.Context, in Input) (*Output, error) {
	S, D := len(in.IDs), m.cfg.Text.Hidden
	if S == 0 {
		return nil, fmt.Errorf("textenc: empty input (an empty prompt is the single pad token %d)", 151643)
	}
	if len(in.Positions) != S {
		return nil, fmt.Errorf("textenc: %d positions for %d tokens", len(in.Positions), S)
	}
	if in.Tags != nil && len(in.Tags) != S {
		return nil, fmt.Errorf("textenc: %d tags for %d tokens", len(in.Tags), S)
	}
	runs := m.padRuns(in.IDs)
	if len(runs) != len(in.Items) {
		return nil, fmt.Errorf("textenc: the ids hold %d vision blocks but %d vision items were given", len(runs), len(in.Items))
	}
	x, err := m.embed(in.IDs)
	if err != nil {
		return nil, err
	}
	var pos positions
	for a := range pos {
		pos[a] = make([]int32, S)
	}
	for s, p := range in.Positions {
		pos[0][s], pos[1][s], pos[2][s] = int32(p[0]), int32(p[1]), int32(p[2])
	}
	var visual []int
	deep := make([][]float32, len(m.cfg.Vision.Deepstack))
	for k, it := range in.Items {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := m.encodeItem(k, it)
		if err != nil {
			return nil, err
		}
		r := runs[k]
		if f.tokens != r.n {
			return nil, fmt.Errorf("textenc: vision block %d has %d pad tokens but its %dx%d item gives %d tokens", k, r.n, it.Width, it.Height, f.tokens)
		}
		copy(x[r.start*D:(r.start+r.n)*D], f.merged)
		for j := 0; j < r.n; j++ {
			visual = append(visual, r.start+j)
		}
		for i := range deep {
			deep[i] = append(deep[i], f.deepstack[i]...)
		}
	}
	if m.streamed() {
		m.freeVision()
	}
	if len(visual) > 0 && m.opts.Tap != nil {
		ve := make([]float32, 0, len(visual)*D)
		for _, r := range visual {
			ve = append(ve, x[r*D:(r+1)*D]...)
		}
		m.tap("vision_embeds", ve)
		for i, d := range deep {
			m.tap(fmt.Sprintf("deepstack.%d", i), d)
		}
	}
	m.tap("inputs_embeds", x)
	if len(visual) == 0 {
		deep = nil
	}
	if err := m.runText(ctx, x, pos, visual, deep); err != nil {
		return nil, err
	}
	m.tap("hidden", x)
	return &Output{Hidden: x, Tokens: S, Width: D, Tags: in.Tags}, nil
}
