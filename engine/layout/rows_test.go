package layout

import (
	"math"
	"testing"
)

// checksums are h3.c's position checksums (tests/test_h3.c
// position_checksums): per-axis sums and index-weighted sums.
func checksums(p [][3]float64) (sums, weighted [3]float64) {
	for i, v := range p {
		for a := range 3 {
			sums[a] += v[a]
			weighted[a] += float64(i+1) * v[a]
		}
	}
	return
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

type wantSeg struct {
	start, end int
	kind       SegmentKind
}

func checkSegs(t *testing.T, l *Layout, want []wantSeg) {
	t.Helper()
	if len(l.Segments) != len(want) {
		t.Fatalf("%d segments, want %d", len(l.Segments), len(want))
	}
	for i, w := range want {
		s := l.Segments[i]
		if s.Start != w.start || s.End() != w.end || s.Kind != w.kind {
			t.Errorf("segment %d = [%d,%d) %v, want [%d,%d) %v", i, s.Start, s.End(), s.Kind, w.start, w.end, w.kind)
		}
	}
}

// rowsOnly lays out rows from latent-level inputs, as h3.c's
// h3_layout_build does, so its test vectors apply unchanged.
func rowsOnly(text int, c Canvas, latentT, audioT int, first, last bool, refs []RefLayout) *Layout {
	l := &Layout{Canvas: c, LatentFrames: latentT, AudioLatents: audioT, Refs: refs,
		Qwen: Presentation{Spans: []Span{{Kind: SpanPrompt, Tokens: text}}}}
	l.buildSegments(&Spec{First: first, Last: last})
	return l
}

// h3.c test_layout_tiny, test_layout_fl2va and test_layout_ref2va.
func TestPositionsMatchH3C(t *testing.T) {
	l := rowsOnly(12, Canvas{32, 32}, 2, 8, false, false, nil)
	checkSegs(t, l, []wantSeg{{0, 12, SegText}, {12, 28, SegAudio}, {28, 30, SegVideo}})
	s, w := checksums(l.Positions())
	if !near(s[0], 339.6666666666667, 1e-10) || !near(w[0], 6498, 1e-10) || s[1] != 0 || s[2] != 0 {
		t.Errorf("tiny: sums %v weighted %v", s, w)
	}

	c := Canvas{54 * 16, 30 * 16}
	l = rowsOnly(128, c, 17, 93, true, true, nil)
	checkSegs(t, l, []wantSeg{{0, 128, SegText}, {128, 533, SegAnchor}, {533, 938, SegAnchor}, {938, 1124, SegAudio}, {1124, 8009, SegVideo}})
	s, w = checksums(l.Positions())
	if !near(s[0], 1360927.0, 1e-6) || !near(w[0], 5883121758.0, 1e-4) || !near(s[1], 117002.11801356057, 1e-7) || !near(s[2], 119830.2393846486, 1e-7) {
		t.Errorf("fl2va: sums %v weighted %v", s, w)
	}

	refCanvas := Canvas{24 * 16, 16 * 16}
	refs := []RefLayout{
		{Ref: Ref{Kind: RefImage}, Canvas: refCanvas, LatentFrames: 1},
		{Ref: Ref{Kind: RefVideoAudio}, Canvas: refCanvas, LatentFrames: 7, AudioLatents: 48},
		{Ref: Ref{Kind: RefAudio}, AudioLatents: 80},
	}
	l = rowsOnly(192, c, 17, 93, false, false, refs)
	checkSegs(t, l, []wantSeg{{0, 192, SegText}, {192, 288, SegRefImage}, {288, 384, SegRefAudio}, {384, 1056, SegRefVideo},
		{1056, 1216, SegRefAudio}, {1216, 1402, SegAudio}, {1402, 8287, SegVideo}})
	s, w = checksums(l.Positions())
	if !near(s[0], 2818905.0, 1e-5) || !near(w[0], 12788836714.0, 1e-3) || !near(s[1], 115719.96684277552, 1e-7) || !near(s[2], 122360.11344760543, 1e-7) {
		t.Errorf("ref2va: sums %v weighted %v", s, w)
	}
	for i := range l.Segments {
		seg := &l.Segments[i]
		wantRole := map[SegmentKind]TimestepRole{SegText: TimestepVideo, SegRefImage: TimestepVisualCond, SegRefVideo: TimestepVisualCond,
			SegRefAudio: TimestepAudioCond, SegAudio: TimestepAudio, SegVideo: TimestepVideo}[seg.Kind]
		if seg.Timestep != wantRole {
			t.Errorf("%v: timestep %v, want %v", seg.Kind, seg.Timestep, wantRole)
		}
		// Position(i) must agree with the bulk generator.
		all := l.Positions()
		for _, i := range []int{0, seg.Rows / 2, seg.Rows - 1} {
			if seg.Position(i) != all[seg.Start+i] {
				t.Errorf("%v row %d: %v vs %v", seg.Kind, i, seg.Position(i), all[seg.Start+i])
			}
		}
	}
}

// Facts §2: the spatial step is 32/sqrt(nh*nw): 4 at 256², 2 at 512²,
// 1.008 at 1344x768.
func TestGridStep(t *testing.T) {
	for _, c := range []struct {
		c    Canvas
		step float64
	}{{Canvas{256, 256}, 4}, {Canvas{512, 512}, 2}, {Canvas{1344, 768}, 32 / math.Sqrt(24*42)}} {
		_, _, hAt, wAt := grid(c.c)
		if !near(hAt(1)-hAt(0), c.step, 1e-12) || !near(wAt(1)-wAt(0), c.step, 1e-12) {
			t.Errorf("%v: steps %v %v, want %v", c.c, hAt(1)-hAt(0), wAt(1)-wAt(0), c.step)
		}
	}
}

// Qwen mRoPE: text, then a 2x3 block at index s=3 with offset 0, then text
// continuing from s+max(2,3).
func TestQwenPositions(t *testing.T) {
	p := Presentation{Spans: []Span{
		{Kind: SpanLabel, Tokens: 2},
		{Kind: SpanImage, Tokens: 8, GridH: 2, GridW: 3},
		{Kind: SpanPrompt, Tokens: 2},
	}}
	got := p.Positions()
	want := [][3]int{{0, 0, 0}, {1, 1, 1}, {2, 2, 2},
		{3, 3, 3}, {3, 3, 4}, {3, 3, 5}, {3, 4, 3}, {3, 4, 4}, {3, 4, 5},
		{6, 6, 6}, {7, 7, 7}, {8, 8, 8}}
	if len(got) != len(want) {
		t.Fatalf("%d positions", len(got))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("token %d: %v, want %v", i, got[i], want[i])
		}
	}
	m := p.Modalities()
	if m[1] != ModalityText || m[2] != ModalityVideo || m[9] != ModalityVideo || m[10] != ModalityText {
		t.Errorf("modalities %v", m)
	}
}
