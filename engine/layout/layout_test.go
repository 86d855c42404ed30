package layout

import "testing"

// Temporal table from h3.c tests/test_h3.c (test_temporal_and_canvas).
func TestTemporal(t *testing.T) {
	cases := []struct{ requested, frames, videoT, audioT int }{
		{5, 5, 2, 8}, {6, 22, 7, 37}, {22, 22, 7, 37}, {23, 39, 12, 65}, {56, 56, 17, 93},
		{124, 124, 37, 207}, {361, 362, 107, 603}, {362, 362, 107, 603},
		// H3 facts §3 examples.
		{107, 107, 32, 178}, {243, 243, 72, 405}, {160, 175, 52, 292}, {120, 124, 37, 207},
	}
	for _, c := range cases {
		f := AlignFrames(c.requested)
		if f != c.frames || LatentFrames(f) != c.videoT || AudioLatents(f) != c.audioT {
			t.Errorf("requested %d: frames %d video_t %d audio_t %d, want %d %d %d",
				c.requested, f, LatentFrames(f), AudioLatents(f), c.frames, c.videoT, c.audioT)
		}
	}
	if got := FramesForSeconds(10); got != 243 {
		t.Errorf("10 s -> %d frames, want 243 (h3.c README)", got)
	}
	if got := FramesForSeconds(5); got != 124 {
		t.Errorf("5 s -> %d frames, want 124", got)
	}
	// h3.c h3_video_encoder_latent_t and facts §13's 107-frame example; the
	// official path keeps the first 17k+5 frames (SGLang's
	// get_suitable_video_length, trim mode): 38 frames encode as 22 (7
	// latents, where all 38 as 17-frame clips would give 12), 21 as 5.
	for _, c := range []struct{ f, h3c, official int }{{1, 1, 2}, {5, 2, 2}, {21, 6, 2}, {22, 6, 7}, {38, 10, 7}, {39, 10, 12}, {107, 27, 32}, {175, 44, 52}, {56, 14, 17}} {
		if g := RefVideoLatentFrames(c.f, ConventionH3C); g != c.h3c {
			t.Errorf("h3.c latents(%d) = %d, want %d", c.f, g, c.h3c)
		}
		if g := RefVideoLatentFrames(c.f, ConventionOfficial); g != c.official {
			t.Errorf("official latents(%d) = %d, want %d", c.f, g, c.official)
		}
	}
}

// Canvas resolvers against h3.c's test table and the facts' aspect list.
func TestCanvases(t *testing.T) {
	c := func(w, h int) Canvas { return Canvas{w, h} }
	adapt := []struct{ in, want Canvas }{
		{c(1920, 1080), c(1344, 768)}, {c(1080, 1920), c(768, 1344)}, {c(864, 480), c(1376, 768)},
		{c(32, 32), c(768, 768)}, {c(21, 9), c(1536, 672)}, {c(4, 3), c(1024, 768)}, {c(3, 4), c(768, 1024)},
	}
	for _, a := range adapt {
		if g := AdaptCanvas(a.in); g != a.want {
			t.Errorf("AdaptCanvas(%v) = %v, want %v", a.in, g, a.want)
		}
	}
	img := []struct {
		src, target Canvas
		p           ImagePolicy
		want        Canvas
	}{
		{c(1920, 1080), c(512, 512), PolicyMatch, c(672, 384)},
		{c(640, 480), c(1024, 1024), PolicyMatch, c(640, 480)},
		{c(4096, 2160), c(512, 512), PolicyMax, c(3872, 2048)},
		{c(1365, 1821), c(640, 480), PolicyMatch, c(480, 640)},
		{c(1365, 1821), c(1344, 768), PolicyMatch, c(864, 1184)},
		{c(1365, 1821), c(1344, 768), PolicyOfficial, c(2048, 2720)},
		{c(1024, 1024), c(960, 544), PolicyMax, c(1024, 1024)},
	}
	for _, a := range img {
		if g := RefImageCanvas(a.src, a.target, a.p, 0); g != a.want {
			t.Errorf("RefImageCanvas(%v, %v, %v) = %v, want %v", a.src, a.target, a.p, g, a.want)
		}
	}
	// The official path resolves every clip to the 768-class canvas of its
	// aspect ratio, enlarging small clips (SGLang prequeue.py).
	for _, a := range []struct{ in, want Canvas }{{c(1920, 1080), c(1344, 768)}, {c(640, 360), c(1344, 768)}, {c(1280, 720), c(1344, 768)}, {c(1080, 1920), c(768, 1344)}} {
		if g := RefVideoCanvas(a.in, ClipOfficial); g != a.want {
			t.Errorf("RefVideoCanvas(%v) = %v, want %v", a.in, g, a.want)
		}
	}
	// h3.c's and ComfyUI's rule, kept as the "source" option: never enlarge.
	for _, a := range []struct{ in, want Canvas }{{c(1920, 1080), c(1344, 768)}, {c(640, 360), c(640, 352)}} {
		if g := RefVideoCanvas(a.in, ClipSource); g != a.want {
			t.Errorf("RefVideoCanvas(%v, source) = %v, want %v", a.in, g, a.want)
		}
	}
	// Vision tokens per image (facts §5).
	for _, a := range []struct {
		c Canvas
		n int
	}{{c(640, 640), 400}, {c(768, 1344), 1008}, {c(2048, 2048), 4096}, {c(3648, 2048), 7296}} {
		if a.c.Tokens() != a.n {
			t.Errorf("%v: %d tokens, want %d", a.c, a.c.Tokens(), a.n)
		}
	}
	if g := ScaleCanvas(c(1344, 768), 0.25); g != c(672, 384) {
		t.Errorf("ScaleCanvas quarter = %v", g)
	}
	if g := ScaleCanvas(c(512, 512), 0.6); g != c(384, 384) {
		t.Errorf("ScaleCanvas(512², 0.6) = %v", g)
	}
}

func build(t *testing.T, s Spec) *Layout {
	t.Helper()
	l, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(l.Positions()); got != l.Rows {
		t.Fatalf("%d positions for %d rows", got, l.Rows)
	}
	return l
}

// Row totals quoted in the facts and perf notes.
func TestRowFigures(t *testing.T) {
	cases := []struct {
		name         string
		w, h, f, txt int
		video, audio int
		total        int
	}{
		{"h3.c 864-class benchmark", 864, 480, 22, 1, 2835, 74, 2910},
		{"512 class", 512, 512, 22, 1, 1792, 74, 1867},
		{"vpipe 960x544x124 T2VA, 32-token prompt", 960, 544, 124, 32, 18870, 414, 19316},
		{"1344x768x124", 1344, 768, 124, 1, 37296, 414, 37711},
		{"1344x768x362", 1344, 768, 362, 1, 107856, 1206, 109063},
		{"864x480x56", 864, 480, 56, 1, 6885, 186, 7072},
	}
	for _, c := range cases {
		l := build(t, Spec{Canvas: Canvas{c.w, c.h}, Frames: c.f, PromptTokens: c.txt})
		n := l.Counts()
		if n.Video != c.video || n.Audio != c.audio || n.Total != c.total || n.Text != c.txt {
			t.Errorf("%s: %+v, want video %d audio %d total %d", c.name, n, c.video, c.audio, c.total)
		}
	}
}

// The 34121-row vpipe forward: 640x480x362 FL2VA with one anchor; the facts
// attribute 515 text rows to ≈5 label tokens + 302 vision-span tokens +
// ≈208 prompt tokens. With the measured 6-token label the prompt is 207.
func TestFL2VA34121(t *testing.T) {
	l := build(t, Spec{Canvas: Canvas{640, 480}, Frames: 362, PromptTokens: 207, First: true})
	n := l.Counts()
	if n.Conditions != 300 || n.Video != 32100 || n.Audio != 1206 || n.Text != 515 || n.Total != 34121 {
		t.Fatalf("%+v", n)
	}
	if l.Qwen.VisionTokens() != 302 || l.Qwen.LabelTokens() != 6 {
		t.Errorf("vision %d labels %d", l.Qwen.VisionTokens(), l.Qwen.LabelTokens())
	}
}

// vpipe docs/MINIMAX-H3.md: 960x544x56 Ref2VA with one 1024² image and one
// clip with soundtrack = 31,335 rows, of which 4,131 Qwen rows; everything
// but the prompt is fixed by the inputs (27,204 DiT rows, 4,091 tokens).
func TestVpipeRef2VA31335(t *testing.T) {
	refs := []Ref{
		{Kind: RefImage, Source: Canvas{1024, 1024}, Policy: PolicyMax},
		{Kind: RefVideoAudio, Source: Canvas{1920, 1080}, SourceFrames: 240, AudioSeconds: 10},
	}
	l := build(t, Spec{Canvas: Canvas{960, 544}, Frames: 56, PromptTokens: 0, Refs: refs})
	n := l.Counts()
	if n.Total-n.Text != 27204 {
		t.Errorf("non-text rows %d, want 27204 (%+v)", n.Total-n.Text, n)
	}
	if n.Text != 4091 {
		t.Errorf("non-prompt Qwen tokens %d, want 4091 = 4131 - a 40-token prompt", n.Text)
	}
	if l.Refs[0].DiTRows != 1024 || l.Refs[1].LatentFrames != 17 || l.Refs[1].AudioLatents != 94 {
		t.Errorf("refs: %+v", l.Refs)
	}
}

// The h3.c threadgroup report (seeds/h3c-issue-threadgroup.md): a 7.7 s
// 1080x1920 clip, five 2400 px images, a long prompt. Its failing Qwen
// sequences were 10231 (5 images + clip, 160 frames), 8199 (same, 120
// frames) and 8184 (clip only, 160 frames). Facts §6 place the output near
// 864x480; we take 2400x1600 photos and a 57-token prompt, which reproduce
// 10231 and 8199 exactly and 8184 within 7 tokens (the label uncertainty).
func TestSeedQwenSequences(t *testing.T) {
	clip := Ref{Kind: RefVideo, Name: "clip.mp4", Source: Canvas{1080, 1920}, SourceFrames: 185}
	var imgs []Ref
	for range 5 {
		imgs = append(imgs, Ref{Kind: RefImage, Source: Canvas{2400, 1600}})
	}
	cases := []struct {
		refs   []Ref
		frames int
		want   int
		tol    int
	}{
		{append(append([]Ref{}, imgs...), clip), 160, 10231, 0},
		{append(append([]Ref{}, imgs...), clip), 120, 8199, 0},
		{[]Ref{clip}, 160, 8184, 7},
	}
	for _, c := range cases {
		l := build(t, Spec{Canvas: Canvas{864, 480}, Frames: c.frames, PromptTokens: 57, Refs: c.refs})
		if got := l.Qwen.Tokens(); abs(got-c.want) > c.tol {
			t.Errorf("%d refs, %d frames: %d Qwen tokens, want %d±%d", len(c.refs), c.frames, got, c.want, c.tol)
		}
	}
	l := build(t, Spec{Canvas: Canvas{864, 480}, Frames: 160, PromptTokens: 57, Refs: []Ref{clip}})
	rl := l.Refs[0]
	if rl.Canvas != (Canvas{768, 1344}) || rl.Frames != 175 || rl.QwenBlocks != 8 {
		t.Errorf("clip: canvas %v frames %d blocks %d, want 768x1344, 175, 8", rl.Canvas, rl.Frames, rl.QwenBlocks)
	}
	// Facts §6: 44 (h3.c) and 52 (official) latent frames of 1008 rows.
	if rl.LatentFrames*rl.Canvas.Tokens() != 52416 {
		t.Errorf("clip DiT rows %d, want 52416", rl.DiTRows)
	}
	want := []string{"<0.2 seconds>", "<1.2 seconds>", "<2.2 seconds>", "<3.2 seconds>", "<4.2 seconds>", "<5.2 seconds>", "<6.2 seconds>", "<7.0 seconds>"}
	var got []string
	for _, sp := range l.Qwen.Spans {
		if sp.Kind == SpanLabel && sp.Text[1] != 'V' {
			got = append(got, sp.Text)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("timestamps %q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("timestamp %d = %q, want %q", i, got[i], want[i])
		}
	}
	// Blocks per output length (facts §6): 56 -> 3, 107 -> 5, >=185 -> 8.
	for _, c := range []struct{ frames, blocks int }{{56, 3}, {107, 5}, {243, 8}} {
		l := build(t, Spec{Canvas: Canvas{864, 480}, Frames: c.frames, PromptTokens: 1, Refs: []Ref{clip}})
		if l.Refs[0].QwenBlocks != c.blocks {
			t.Errorf("%d frames: %d blocks, want %d", c.frames, l.Refs[0].QwenBlocks, c.blocks)
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func TestLabelTokens(t *testing.T) {
	for _, c := range []struct {
		s string
		n int
	}{{"<Picture 1>: ", 6}, {"<Picture 9>: ", 6}, {"<Video 3>: ", 6}, {"<Audio 2>: ", 5}, {"<0.2 seconds>", 6}, {"<9.0 seconds>", 6}, {"<12.2 seconds>", 7}} {
		if g := LabelTokens(c.s); g != c.n {
			t.Errorf("LabelTokens(%q) = %d, want %d", c.s, g, c.n)
		}
	}
}

func TestPoolingShrinksQwenOnly(t *testing.T) {
	clip := Ref{Kind: RefVideo, Source: Canvas{1080, 1920}, SourceFrames: 185}
	base := build(t, Spec{Canvas: Canvas{864, 480}, Frames: 175, PromptTokens: 50, Refs: []Ref{clip}})
	clip.Pool = Pool{Temporal: 2}
	tp := build(t, Spec{Canvas: Canvas{864, 480}, Frames: 175, PromptTokens: 50, Refs: []Ref{clip}})
	clip.Pool = Pool{Temporal: 2, Spatial: 2}
	sp := build(t, Spec{Canvas: Canvas{864, 480}, Frames: 175, PromptTokens: 50, Refs: []Ref{clip}})
	if tp.Refs[0].QwenBlocks != 4 || tp.Refs[0].QwenTokens != 6+4*(6+1010) {
		t.Errorf("temporal pool: %d blocks, %d tokens", tp.Refs[0].QwenBlocks, tp.Refs[0].QwenTokens)
	}
	if sp.Refs[0].QwenTokens != 6+4*(6+12*21+2) {
		t.Errorf("spatial pool: %d tokens", sp.Refs[0].QwenTokens)
	}
	if base.Rows-base.Qwen.Tokens() != tp.Rows-tp.Qwen.Tokens() || tp.Rows-tp.Qwen.Tokens() != sp.Rows-sp.Qwen.Tokens() {
		t.Error("pooling changed non-text DiT rows")
	}
}

func TestLimits(t *testing.T) {
	img := Ref{Kind: RefImage, Source: Canvas{800, 600}}
	vid := Ref{Kind: RefVideo, Source: Canvas{640, 360}, SourceFrames: 100}
	aud := Ref{Kind: RefAudio, AudioSeconds: 6}
	rep := func(r Ref, n int) []Ref {
		var out []Ref
		for range n {
			out = append(out, r)
		}
		return out
	}
	bad := map[string]Spec{
		"10 images":        {Refs: rep(img, 10)},
		"4 clips":          {Refs: rep(vid, 4)},
		"4 audio":          {Refs: append(rep(aud, 4), img)},
		"13 refs":          {Refs: append(append(rep(img, 9), rep(vid, 3)...), aud)},
		"audio alone":      {Refs: rep(aud, 2)},
		"short audio":      {Refs: []Ref{img, {Kind: RefAudio, AudioSeconds: 1.5}}},
		"anchor and ref":   {First: true, Refs: []Ref{img}},
		"elongated":        {Refs: []Ref{{Kind: RefImage, Source: Canvas{5000, 1000}}}},
		"audio over 15 s":  {Frames: 362, Refs: []Ref{img, {Kind: RefAudio, AudioSeconds: 14}, {Kind: RefAudio, AudioSeconds: 2.5}}},
		"short soundtrack": {Frames: 39, Refs: []Ref{{Kind: RefVideoAudio, Source: Canvas{640, 360}, SourceFrames: 100, AudioSeconds: 5}}},
	}
	for name, s := range bad {
		s.Canvas = Canvas{512, 512}
		if s.Frames == 0 {
			s.Frames = 124
		}
		if _, err := Build(s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Build(Spec{Canvas: Canvas{512, 500}, Frames: 22}); err == nil {
		t.Error("512x500 accepted")
	}
	if _, err := Build(Spec{Canvas: Canvas{1344, 800}, Frames: 22}); err == nil {
		t.Error("over the area cap accepted")
	}
	// The 15 s total caps (truncates) the last clip while 2 s remain.
	l, err := Build(Spec{Canvas: Canvas{512, 512}, Frames: 362, Refs: []Ref{img, {Kind: RefAudio, AudioSeconds: 9}, {Kind: RefAudio, AudioSeconds: 7}}})
	if err != nil || l.Refs[2].UsedSeconds != 6 || l.Refs[2].AudioLatents != 240 {
		t.Errorf("15 s cap: %v %+v", err, l)
	}
	// Each audio input is cut to the output's length (the official
	// audio_encoding.py bounds every extraction by frame_count / fps).
	l, err = Build(Spec{Canvas: Canvas{512, 512}, Frames: 124, Refs: []Ref{img, {Kind: RefAudio, AudioSeconds: 9}}})
	if err != nil || l.Refs[1].UsedSeconds != 124.0/FPS {
		t.Errorf("output-length cut: %v, used %v s", err, l.Refs[1].UsedSeconds)
	}
	ok := Spec{Canvas: Canvas{512, 512}, Frames: 124, Refs: append(append(rep(img, 8), vid), aud, aud)}
	if _, err := Build(ok); err != nil {
		t.Error(err)
	}
}
