package layout

import "testing"

// A model that declares a reference short edge gets its references no
// larger than that, aspect kept and rounded as the official sizes are; a
// model that declares none gets exactly the release's sizing.
func TestRefCanvasModelShortEdge(t *testing.T) {
	c := func(w, h int) Canvas { return Canvas{w, h} }
	target := c(128, 128)
	cases := []struct {
		name  string
		ref   Ref
		model int
		want  Canvas
	}{
		{"phone clip, release", Ref{Kind: RefVideoAudio, Source: c(1080, 1920)}, 0, c(768, 1344)},
		{"phone clip, 128", Ref{Kind: RefVideoAudio, Source: c(1080, 1920)}, 128, c(128, 224)},
		{"silent clip, source policy, 128", Ref{Kind: RefVideo, Source: c(1920, 1080), ClipPolicy: ClipSource}, 128, c(224, 128)},
		{"photo, release", Ref{Kind: RefImage, Source: c(2400, 1600), Policy: PolicyOfficial}, 0, c(3072, 2048)},
		{"photo, 128", Ref{Kind: RefImage, Source: c(2400, 1600), Policy: PolicyOfficial}, 128, c(192, 128)},
		{"photo, match, 128", Ref{Kind: RefImage, Source: c(2400, 1600)}, 128, c(160, 96)},
		// The planner's own lever still lowers it further.
		{"photo, 128, planner 64", Ref{Kind: RefImage, Source: c(2400, 1600), Policy: PolicyOfficial, CapShortEdge: 64}, 128, c(96, 64)},
		{"clip smaller than the cap", Ref{Kind: RefVideo, Source: c(64, 96), ClipPolicy: ClipSource}, 128, c(64, 96)},
	}
	for _, k := range cases {
		if g := RefCanvas(k.ref, target, k.model); g != k.want {
			t.Errorf("%s: RefCanvas = %v, want %v", k.name, g, k.want)
		}
	}
	// Build asks the same function: the spec's declared edge reaches
	// every reference's layout.
	s := Spec{Canvas: target, Frames: 56, RefShortEdge: 128, Refs: []Ref{cases[1].ref, cases[4].ref}}
	s.Refs[0].SourceFrames, s.Refs[0].AudioSeconds = 192, 8
	l, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []Canvas{c(128, 224), c(192, 128)} {
		if l.Refs[i].Canvas != want {
			t.Errorf("Build: reference %d canvas %v, want %v", i+1, l.Refs[i].Canvas, want)
		}
	}
}
