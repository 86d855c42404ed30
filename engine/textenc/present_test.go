package textenc

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/engine/layout"
	"h3studio/engine/tokenizer"
	"h3studio/engine/weights"
)

// tinySnapshot writes the project's tiny random-weight snapshot (official
// layout, BF16 Qwen3-VL text encoder, tiny tokenizer) and opens its text
// encoder.
func tinySnapshot(t *testing.T) (Config, weights.Source, *tokenizer.Tokenizer) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := weights.WriteTiny(dir, weights.TinyOptions{Seed: 3}); err != nil {
		t.Fatal(err)
	}
	snap, err := weights.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	part := snap.Partitions[0]
	te := part.Component("text_encoder")
	if te == nil || te.Config == "" || part.Tokenizer == "" {
		t.Fatal("tiny snapshot has no text_encoder config or tokenizer")
	}
	cfg, err := LoadConfig(te.Config)
	if err != nil {
		t.Fatal(err)
	}
	src, err := te.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	tok, err := tokenizer.Load(part.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, src, tok
}

func randomItem(rng *rand.Rand, c VisionConfig, h, w, blocks int, pool layout.Pool) Item {
	it := Item{Height: h, Width: w, Pool: pool}
	for i := 0; i < blocks*c.TemporalPatch; i++ {
		f := make([]float32, c.InChannels*h*w)
		for j := range f {
			f[j] = rng.Float32()
		}
		it.Frames = append(it.Frames, f)
	}
	return it
}

// pool64 averages a merged grid over sp x sp squares (partial squares at
// the edges average what they hold), in float64.
func pool64(x []float64, mh, mw, d, sp int) []float64 {
	ph, pw := (mh+sp-1)/sp, (mw+sp-1)/sp
	out := make([]float64, ph*pw*d)
	for py := 0; py < ph; py++ {
		for px := 0; px < pw; px++ {
			n := 0.0
			for y := py * sp; y < mh && y < (py+1)*sp; y++ {
				for xx := px * sp; xx < mw && xx < (px+1)*sp; xx++ {
					for i := 0; i < d; i++ {
						out[(py*pw+px)*d+i] += x[(y*mw+xx)*d+i]
					}
					n++
				}
			}
			for i := 0; i < d; i++ {
				out[(py*pw+px)*d+i] /= n
			}
		}
	}
	return out
}

// ropeIndex builds the ids and positions HF's Qwen3-VL rope-index rule
// gives a sequence: a text token advances all three axes together; a
// vision block's pads spread over rows and columns from one start, and the
// next token starts after the block's larger side.
type ropeIndex struct {
	cfg  Config
	tok  *tokenizer.Tokenizer
	ids  []int32
	pos  [][3]int
	next int
}

func (q *ropeIndex) text(s string) {
	for _, id := range q.tok.Encode(s) {
		q.ids = append(q.ids, int32(id))
		q.pos = append(q.pos, [3]int{q.next, q.next, q.next})
		q.next++
	}
}

// block appends a vision block of gh x gw pad tokens between its delimiters.
func (q *ropeIndex) block(pad, gh, gw int) {
	q.ids = append(q.ids, int32(q.cfg.VisionStart))
	q.pos = append(q.pos, [3]int{q.next, q.next, q.next})
	q.next++
	for r := 0; r < gh; r++ {
		for c := 0; c < gw; c++ {
			q.ids = append(q.ids, int32(pad))
			q.pos = append(q.pos, [3]int{q.next, q.next + r, q.next + c})
		}
	}
	q.next += max(gh, gw)
	q.ids = append(q.ids, int32(q.cfg.VisionEnd))
	q.pos = append(q.pos, [3]int{q.next, q.next, q.next})
	q.next++
}

// checkRealised wants in to hold exactly ids at pos, with every vision
// token (delimiters and pads) tagged as video and no other.
func checkRealised(t *testing.T, cfg Config, in Input, ids []int32, pos [][3]int) {
	t.Helper()
	if len(in.IDs) != len(ids) {
		t.Fatalf("realised %d ids, want %d", len(in.IDs), len(ids))
	}
	for i := range ids {
		if in.IDs[i] != ids[i] || in.Positions[i] != pos[i] {
			t.Fatalf("token %d: id %d pos %v, want id %d pos %v", i, in.IDs[i], in.Positions[i], ids[i], pos[i])
		}
		isVision := in.IDs[i] == int32(cfg.VisionStart) || in.IDs[i] == int32(cfg.VisionEnd) ||
			in.IDs[i] == int32(cfg.ImageToken) || in.IDs[i] == int32(cfg.VideoToken)
		if (in.Tags[i] == layout.ModalityVideo) != isVision {
			t.Errorf("token %d (id %d): tag %d", i, in.IDs[i], in.Tags[i])
		}
	}
}

// presentedEmbeds64 is the float64 reference input for TestRealiseAndEncode's
// presentation: the token embeddings of ids with the image's and the pooled
// video's merged vision rows spliced over their pads, which pads those are,
// and the deepstack rows (image, then pooled video). The pooled video
// averages its two blocks, then 2x2 cells.
func (r *ref64) presentedEmbeds64(ids []int32, img, vid Item) (emb []float64, visual []bool, deepstack [][]float64) {
	vc, D := r.cfg.Vision, r.cfg.Text.Hidden
	m0, d0, _ := r.visionTower64(toF64(patchify(vc, img)), 4, 6)
	var mv []float64
	dv := make([][]float64, len(vc.Deepstack))
	for blk := 0; blk < 2; blk++ {
		one := vid
		one.Frames = vid.Frames[blk*2 : blk*2+2]
		mb, db, _ := r.visionTower64(toF64(patchify(vc, one)), 6, 10)
		if mv == nil {
			mv = make([]float64, len(mb))
			for k := range dv {
				dv[k] = make([]float64, len(mb))
			}
		}
		for i := range mb {
			mv[i] += mb[i] / 2
			for k := range dv {
				dv[k][i] += db[k][i] / 2
			}
		}
	}
	mv = pool64(mv, 3, 5, D, 2)
	emb = r.embed64(ids)
	for k := range dv {
		deepstack = append(deepstack, append(append([]float64(nil), d0[k]...), pool64(dv[k], 3, 5, D, 2)...))
	}
	vis := append(append([]float64(nil), m0...), mv...)
	j := 0
	for s, id := range ids {
		v := id == int32(r.cfg.ImageToken) || id == int32(r.cfg.VideoToken)
		visual = append(visual, v)
		if v {
			copy(emb[s*D:(s+1)*D], vis[j*D:(j+1)*D])
			j++
		}
	}
	return emb, visual, deepstack
}

// TestRealiseAndEncode realises a Ref2VA-style presentation (an image, a
// temporally and spatially pooled 2-fps video block, labels and a prompt)
// with the tiny snapshot's tokenizer, encodes it, and checks ids,
// positions, tags and the hidden state against the float64 reference,
// pooling included.
func TestRealiseAndEncode(t *testing.T) {
	cfg, src, tok := tinySnapshot(t)
	b := newBackend(t)
	m, err := New(b, src, cfg, Options{Precision: ggml.Exact(), QueryChunk: 16, RowGroup: 24})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.graphHook = auditHook(t, true)
	vc := cfg.Vision
	rng := rand.New(rand.NewSource(5))
	img := randomItem(rng, vc, 64, 96, 1, layout.Pool{})                         // 2x3 tokens
	vid := randomItem(rng, vc, 96, 160, 2, layout.Pool{Temporal: 2, Spatial: 2}) // 3x5 -> 2x3 tokens
	p := layout.Presentation{Spans: []layout.Span{
		{Kind: layout.SpanLabel, Text: "<Picture 1>: "},
		{Kind: layout.SpanImage, GridH: 2, GridW: 3},
		{Kind: layout.SpanLabel, Text: "<Video 1>: "},
		{Kind: layout.SpanLabel, Text: "<0.7 seconds>"},
		{Kind: layout.SpanVideo, GridH: 2, GridW: 3, Pool: layout.Pool{Temporal: 2, Spatial: 2}},
		{Kind: layout.SpanPrompt},
	}}
	const prompt = "a red fox running through snow"
	in, err := m.Realise(tok, p, prompt, []Item{img, vid})
	if err != nil {
		t.Fatal(err)
	}
	// Expected ids and positions, from the tokenizer and HF's rope-index rule.
	seq := ropeIndex{cfg: cfg, tok: tok}
	seq.text("<Picture 1>: ")
	seq.block(cfg.ImageToken, 2, 3)
	seq.text("<Video 1>: ")
	seq.text("<0.7 seconds>")
	seq.block(cfg.VideoToken, 2, 3)
	seq.text(prompt)
	ids, pos := seq.ids, seq.pos
	checkRealised(t, cfg, in, ids, pos)

	var deep [][]float32
	m.opts.Tap = func(name string, _ []int, data []float32) {
		if len(name) > 10 && name[:10] == "deepstack." {
			deep = append(deep, append([]float32(nil), data...))
		}
	}
	out, err := m.Encode(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	r := newRef64Source(t, cfg, src, func(name string) string { i, _ := src.Lookup(name); return string(i.DType) })
	D := cfg.Text.Hidden
	emb, visual, dsAll := r.presentedEmbeds64(in.IDs, img, vid)
	for k := range deep {
		e := relL2f64(dsAll[k], deep[k])
		t.Logf("pooled deepstack %d rel L2 %.2e (image %.2e, video %.2e)", k, e, relL2f64(dsAll[k][:6*D], deep[k][:6*D]), relL2f64(dsAll[k][6*D:], deep[k][6*D:]))
		if e > tolF32 {
			t.Errorf("deepstack %d: rel L2 %.3g", k, e)
		}
	}
	var p3 [3][]int32
	for a := range p3 {
		for _, q := range pos {
			p3[a] = append(p3[a], int32(q[a]))
		}
	}
	want := r.textModel64(emb, len(ids), p3, cfg.Text.Layers, visual, dsAll)
	e := relL2f64(want, out.Hidden)
	t.Logf("%d tokens, hidden rel L2 vs float64 %.2e", len(ids), e)
	if e > tolF32 {
		t.Errorf("hidden rel L2 %.3g > %g", e, tolF32)
	}
	if len(out.Tags) != len(ids) {
		t.Errorf("output has %d tags for %d rows", len(out.Tags), len(ids))
	}
}

// TestPooledPlanTokens lays out a Ref2VA request whose clip the planner
// pooled (2 blocks per token block, 2x2 cells) next to an image, builds
// one item per vision span from the span's canvas and frames, and checks
// that the realised sequence has exactly the plan's vision token count and
// encodes.
func TestPooledPlanTokens(t *testing.T) {
	cfg, src, tok := tinySnapshot(t)
	lay, err := layout.Build(layout.Spec{
		Canvas: layout.Canvas{Width: 256, Height: 256}, Frames: 56, PromptTokens: 4,
		Refs: []layout.Ref{
			{Kind: layout.RefImage, Source: layout.Canvas{Width: 200, Height: 130}},
			{Kind: layout.RefVideo, Source: layout.Canvas{Width: 160, Height: 96}, SourceFrames: 60, Pool: layout.Pool{Temporal: 2, Spatial: 2}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	b := newBackend(t)
	m, err := New(b, src, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rng := rand.New(rand.NewSource(2))
	var items []Item
	for _, sp := range lay.Qwen.Spans {
		if !sp.Kind.IsVision() {
			continue
		}
		blocks := max(1, (len(sp.Frames)+1)/2)
		items = append(items, randomItem(rng, cfg.Vision, sp.Canvas.Height, sp.Canvas.Width, blocks, sp.Pool))
		t.Logf("%s span: canvas %v, %d frames, pool %+v -> %dx%d tokens", sp.Kind, sp.Canvas, len(sp.Frames), sp.Pool, sp.GridH, sp.GridW)
	}
	in, err := m.Realise(tok, lay.Qwen, "a cat", items)
	if err != nil {
		t.Fatal(err)
	}
	vision := 0
	for _, id := range in.IDs {
		if id == int32(cfg.ImageToken) || id == int32(cfg.VideoToken) || id == int32(cfg.VisionStart) || id == int32(cfg.VisionEnd) {
			vision++
		}
	}
	if vision != lay.Qwen.VisionTokens() {
		t.Errorf("realised %d vision tokens, the plan counts %d", vision, lay.Qwen.VisionTokens())
	}
	out, err := m.Encode(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if out.Tokens != len(in.IDs) {
		t.Errorf("%d output rows for %d tokens", out.Tokens, len(in.IDs))
	}
}

// A checkpoint whose tensors disagree with the config is refused naming
// each misshaped weight by its checkpoint name, for the language layers
// and the vision tower alike.
func TestLoadNamesMisshapedWeights(t *testing.T) {
	cfg, src, _ := tinySnapshot(t)
	cfg.Text.Intermediate *= 2
	cfg.Vision.Intermediate *= 2
	m, err := New(newBackend(t), src, cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, errText := m.layer(0)
	_, errVision := m.visionTower()
	if errText == nil || errVision == nil {
		t.Fatalf("loaded weights the config disagrees with: text %v, vision %v", errText, errVision)
	}
	msg := errText.Error() + "\n" + errVision.Error()
	for _, want := range []string{
		fmt.Sprintf("model.language_model.layers.0.mlp.gate_proj.weight: shape [%d %d], want [%d %d]", cfg.Text.Intermediate/2, cfg.Text.Hidden, cfg.Text.Intermediate, cfg.Text.Hidden),
		"model.language_model.layers.0.mlp.down_proj.weight: shape [",
		fmt.Sprintf("model.visual.blocks.0.mlp.linear_fc1.weight: shape [%d %d], want [%d %d]", cfg.Vision.Intermediate/2, cfg.Vision.Hidden, cfg.Vision.Intermediate, cfg.Vision.Hidden),
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not mention %q:\n%s", want, msg)
		}
	}
}
