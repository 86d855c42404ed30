//go:build long

package textenc

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/layout"
	"h3studio/engine/weights"
)

// randomWeight is a deterministic bf16-rounded N(0, 1/fan_in) matrix (or a
// near-1 norm scale) named by its tensor, regenerated on demand so neither
// side has to keep a float64 copy of a 0.5-billion-parameter layer.
func randomWeight(name string, n, fanIn int) []float32 {
	h := fnv.New64a()
	h.Write([]byte(name))
	r := rand.New(rand.NewPCG(h.Sum64(), 7))
	v := make([]float32, n)
	for i := range v {
		if fanIn == 0 {
			v[i] = float32(1 + 0.1*r.NormFloat64())
		} else {
			v[i] = float32(r.NormFloat64() / math.Sqrt(float64(fanIn)))
		}
	}
	return ggml.BF16ToF32(ggml.F32ToBF16(v))
}

// TestReleaseLayerShortSequence runs one language layer at the release's
// shapes (hidden 5120, 64 query / 8 KV heads of 128, MLP 25600, bf16
// weights) over a short presentation with a vision span's positions, and
// checks two rows against the float64 reference.
func TestReleaseLayerShortSequence(t *testing.T) {
	cfg, err := arch.ReleaseQwen()
	if err != nil {
		t.Fatal(err)
	}
	tc := cfg.Text
	b := newBackend(t)
	shapes := textShapes(tc)
	var l TextLayer
	names := weights.Fields("", &l)
	ws := b.NewWeightSet(len(names))
	defer ws.Free()
	fan := map[string]int{}
	for _, name := range names {
		s := shapes[name]
		dt := ggml.BF16
		if len(s) == 1 {
			dt = ggml.F32
		} else {
			fan[name] = s[0]
		}
		ws.Add(name, dt, s...)
	}
	if err := ws.Alloc(); err != nil {
		t.Fatal(err)
	}
	for _, w := range ws.Tensors() {
		w.SetF32(randomWeight(w.Name(), w.Elements(), fan[w.Name()]))
	}
	if err := weights.Bind(ws, "", &l); err != nil {
		t.Fatal(err)
	}
	t.Logf("layer weights: %d MiB", ws.Size()>>20)

	// 8 text tokens, a 4x6 vision block with its delimiters, 6 more tokens.
	pres := layout.Presentation{Spans: []layout.Span{
		{Kind: layout.SpanLabel, Tokens: 8}, {Kind: layout.SpanImage, Tokens: 26, GridH: 4, GridW: 6}, {Kind: layout.SpanPrompt, Tokens: 6},
	}}
	S := pres.Tokens()
	var pos positions
	for a := range pos {
		for _, q := range pres.Positions() {
			pos[a] = append(pos[a], int32(q[a]))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, S*tc.Hidden)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	m := &Model{cfg: cfg, opts: Options{Layers: 1, QueryChunk: 16, RowGroup: 24}, kvType: b.KVType(), b: b}
	m.graphHook = auditHook(t, false)
	t0 := time.Now()
	k, v, err := m.keysValues(0, &l, x, pos)
	if err != nil {
		t.Fatal(err)
	}
	x0 := append([]float32(nil), x...)
	if err := m.queries(0, &l, x, pos, k, v); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d tokens through a release-shape layer in %v", S, time.Since(t0).Round(time.Millisecond))

	r := &ref64{cfg: cfg, w: func(name string) []float64 {
		short := name[len("model.language_model.layers.0."):]
		s := shapes[short]
		n := 1
		for _, d := range s {
			n *= d
		}
		return toF64(randomWeight(short, n, fan[short]))
	}}
	rows := []int{20, S - 1}
	want := r.textLayerRows64(0, toF64(x0), S, [3][]int32(pos), rows)
	for i, s := range rows {
		e := relL2f64(want[i], x[s*tc.Hidden:(s+1)*tc.Hidden])
		t.Logf("row %d: rel L2 vs float64 %.2e", s, e)
		if e > tolBF16 {
			t.Errorf("row %d: rel L2 %.3g > %g", s, e, tolBF16)
		}
	}
}
