package backendtest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"h3studio/engine/ggml"
)

// causalLong runs causal GQA attention over n tokens on b (4 query heads on 2
// K/V heads, head dim 64, default chunking) and checks sampled rows (chunk
// edges, the first and last rows) against the float64 reference: the
// length h3.c crashes at must work, without any S x S mask.
func causalLong(t *testing.T, b *ggml.Backend, n int) {
	const d, h, hkv = 64, 4, 2
	g := b.NewGraph(0)
	defer g.Free()
	r := rand.New(rand.NewPCG(uint64(n), 7))
	bl := &Builder{G: g, R: r}
	q, qv := bl.Rand("q", ggml.F32, 1, d, n, h)
	k, kv := bl.Rand("k", ggml.F32, 1, d, n, hkv)
	v, vv := bl.Rand("v", ggml.F32, 1, d, n, hkv)
	y := g.Attention(q, k, v, ggml.AttentionOptions{Causal: true})
	g.Output(y)
	if err := g.Compute(); err != nil {
		t.Fatal(err)
	}
	rows := []int{0, 1, 63, 64, ggml.DefaultAttentionChunk - 1, ggml.DefaultAttentionChunk, n/2 + 17, n - 2, n - 1}
	for range 8 {
		rows = append(rows, r.IntN(n))
	}
	want := refAttention(mk(qv, d, n, h), mk(kv, d, n, hkv), mk(vv, d, n, hkv), true, rows)
	got := y.F32()
	var gs []float32
	var ws []float64
	for _, i := range rows {
		if i >= n {
			continue
		}
		off := i * h * d
		gs = append(gs, got[off:off+h*d]...)
		ws = append(ws, want.v[off:off+h*d]...)
	}
	e := NMSE(gs, ws)
	t.Logf("causal GQA n=%d: nmse %.3g over %d sampled rows", n, e, len(rows))
	if !(e <= TolAttn) {
		t.Fatalf("nmse %.3g exceeds %.0e", e, TolAttn)
	}
	var chunks int
	for _, nd := range g.Ops() {
		// the largest tensor may be one chunk's mask (chunk x keys), never S x S
		if el := nd.Shape[0] * nd.Shape[1] * nd.Shape[2] * nd.Shape[3]; el > int64(ggml.DefaultAttentionChunk+64)*int64(n) {
			t.Errorf("node %s holds %d elements (S x S = %d)", nd, el, int64(n)*int64(n))
		}
		if nd.Op == "FLASH_ATTN_EXT" {
			chunks++
			if nd.Src[0].Shape[1] > ggml.MaxAttentionRows {
				t.Errorf("a flash-attention call takes %d rows", nd.Src[0].Shape[1])
			}
		}
	}
	if want := (n + ggml.DefaultAttentionChunk - 1) / ggml.DefaultAttentionChunk; chunks != want {
		t.Errorf("%d flash-attention calls, want %d", chunks, want)
	}
	if fs := ggml.Audit(g); len(fs) != 0 {
		t.Errorf("Metal fallbacks: %v", fs)
	}
}

func TestCausalAttention10231(t *testing.T) { causalLong(t, cpu(t), 10231) }

// TestBadShapesPanic: misuse panics with a Go message naming the tensors,
// before any ggml call could assert.
func TestBadShapesPanic(t *testing.T) {
	b := cpu(t)
	cases := []struct {
		name, want string
		f          func(g *ggml.Graph)
	}{
		{"mulmat", `"w" [64 8] f32 vs "x" [32 4] f32`, func(g *ggml.Graph) {
			g.MulMat(g.Input("w", ggml.F32, 64, 8), g.Input("x", ggml.F32, 32, 4))
		}},
		{"add", `"b" [3 2] f32 does not broadcast over "a" [4 2] f32`, func(g *ggml.Graph) {
			g.Add(g.Input("a", ggml.F32, 4, 2), g.Input("b", ggml.F32, 3, 2))
		}},
		{"reshape", "cannot be reshaped", func(g *ggml.Graph) { g.Reshape(g.Input("a", ggml.F32, 4, 3), 5, 2) }},
		{"view", "reaches byte", func(g *ggml.Graph) { g.View(g.Input("a", ggml.F32, 4, 3), 8, []int{4, 3}, nil) }},
		{"q8 shape", "multiple of 32", func(g *ggml.Graph) { g.Input("w", ggml.Q8_0, 40, 2) }},
		{"attention heads", "not a multiple of", func(g *ggml.Graph) {
			g.FlashAttn(g.Input("q", ggml.F32, 64, 5, 3), g.Input("k", ggml.F16, 64, 9, 2), g.Input("v", ggml.F16, 64, 9, 2), nil, 1)
		}},
		{"attention rows", "more than 65535 rows", func(g *ggml.Graph) {
			g.FlashAttn(g.Input("q", ggml.F32, 64, 70000), g.Input("k", ggml.F16, 64, 9), g.Input("v", ggml.F16, 64, 9), nil, 1)
		}},
		{"conv channels", "does not match the 3 channels", func(g *ggml.Graph) {
			g.Conv2D(g.Input("x", ggml.F32, 8, 8, 3), g.Input("w", ggml.F32, 3, 3, 4, 2), [2]int{1, 1}, [2]int{1, 1}, [2]int{1, 1})
		}},
		{"rope positions", "want 5", func(g *ggml.Graph) {
			g.RoPE(g.Input("x", ggml.F32, 64, 2, 5), g.Input("p", ggml.I32, 4), ggml.RoPEOptions{})
		}},
		{"unary view", "contiguous", func(g *ggml.Graph) { g.SiLU(g.Transpose(g.Input("a", ggml.F32, 4, 3))) }},
		{"graph capacity", "more than", func(g *ggml.Graph) {
			x := g.Input("x", ggml.F32, 4)
			for range ggml.DefaultGraphNodes {
				x = g.Scale(x, 2)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := b.NewGraph(0)
			defer g.Free()
			msg := func() (msg string) {
				defer func() { msg = fmt.Sprint(recover()) }()
				c.f(g)
				return "no panic"
			}()
			if !strings.Contains(msg, "ggml: ") || !strings.Contains(msg, c.want) {
				t.Errorf("panic %q, want it to mention %q", msg, c.want)
			}
		})
	}
}

// TestAuditFlagsFallbacks: nodes ggml-metal rejects are reported, with the
// table's reasons (node descriptions as Graph.Ops would produce them).
func TestAuditFlagsFallbacks(t *testing.T) {
	f32 := ggml.NodeSrc{DType: ggml.F32, Contiguous: true, Strides: [4]int64{4}, Shape: [4]int64{8, 8, 1, 1}}
	leftPad := ggml.Node{Op: "PAD", Desc: "PAD", Src: []ggml.NodeSrc{f32}}
	leftPad.Params[4] = 2 // lp2
	rightPad := ggml.Node{Op: "PAD", Desc: "PAD", Src: []ggml.NodeSrc{f32}}
	rightPad.Params[5] = 2
	bilinear := ggml.Node{Op: "UPSCALE", Desc: "UPSCALE", Src: []ggml.NodeSrc{f32}}
	bilinear.Params[0] = 1
	q := ggml.NodeSrc{Index: 0, DType: ggml.F32, Shape: [4]int64{100, 8, 2, 1}}
	kv := ggml.NodeSrc{Index: 1, DType: ggml.F16, Shape: [4]int64{100, 8, 2, 1}}
	vv := kv
	vv.Index = 2
	nodes := []struct {
		n    ggml.Node
		flag bool
	}{
		{ggml.Node{Op: "IM2COL_3D", Desc: "IM2COL_3D"}, true},
		{ggml.Node{Op: "CONV_3D", Desc: "CONV_3D"}, true},
		{ggml.Node{Op: "POOL_1D", Desc: "POOL_1D"}, true},
		{leftPad, true},
		{rightPad, false},
		{bilinear, true},
		{ggml.Node{Op: "FLASH_ATTN_EXT", Desc: "FLASH_ATTN_EXT", Src: []ggml.NodeSrc{q, kv, vv}}, true}, // head dim 100
		{ggml.Node{Op: "UNARY", Desc: "SILU", Src: []ggml.NodeSrc{f32}}, false},
		{ggml.Node{Op: "CPY", Desc: "CPY", DType: ggml.BF16, Src: []ggml.NodeSrc{{DType: ggml.F16}}}, true},
	}
	for _, c := range nodes {
		fs := ggml.AuditNodes([]ggml.Node{c.n})
		if (len(fs) > 0) != c.flag {
			t.Errorf("%s: flagged=%v, want %v (%v)", c.n, len(fs) > 0, c.flag, fs)
		}
	}
}
