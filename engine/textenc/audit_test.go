package textenc

import (
	"reflect"
	"strings"
	"syscall"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// placeholderWeights binds every weight of module (checkpoint names as
// weights.Fields lists them, shapes from shapes) to a weight set laid over
// one untouched read-only anonymous mapping: enough to build (not run)
// release-shape graphs without gigabytes of memory. Vectors are f32,
// matrices dt.
func placeholderWeights(t *testing.T, b *ggml.Backend, module any, shapes map[string][]int, dt ggml.DType) {
	t.Helper()
	names := weights.Fields("", module)
	ws := b.NewWeightSet(len(names))
	t.Cleanup(ws.Free)
	size, offs := 0, map[string]int{}
	for _, n := range names {
		d := dt
		if len(shapes[n]) == 1 {
			d = ggml.F32
		}
		size = max(size, ws.Add(n, d, shapes[n]...).NBytes())
		offs[n] = 0
	}
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if _, err := ws.AllocHost(mem, offs); err != nil {
		t.Fatal(err)
	}
	if err := weights.Bind(ws, "", module); err != nil {
		t.Fatal(err)
	}
}

func visionShapes(c VisionConfig) map[string][]int {
	D, M := c.Hidden, c.Hidden*c.MergeCell()
	s := map[string][]int{
		"patch_embed.proj.weight": {c.InChannels * c.TemporalPatch * c.Patch * c.Patch, D},
		"patch_embed.proj.bias":   {D}, "pos_embed.weight": {D, c.NumPositions},
	}
	merger := func(p string, normW int) {
		s[p+"norm.weight"], s[p+"norm.bias"] = []int{normW}, []int{normW}
		s[p+"linear_fc1.weight"], s[p+"linear_fc1.bias"] = []int{M, M}, []int{M}
		s[p+"linear_fc2.weight"], s[p+"linear_fc2.bias"] = []int{M, c.OutHidden}, []int{c.OutHidden}
	}
	for i := 0; i < c.Depth; i++ {
		p := "blocks." + itoa(i) + "."
		for _, n := range []string{"norm1", "norm2"} {
			s[p+n+".weight"], s[p+n+".bias"] = []int{D}, []int{D}
		}
		s[p+"attn.qkv.weight"], s[p+"attn.qkv.bias"] = []int{D, 3 * D}, []int{3 * D}
		s[p+"attn.proj.weight"], s[p+"attn.proj.bias"] = []int{D, D}, []int{D}
		s[p+"mlp.linear_fc1.weight"], s[p+"mlp.linear_fc1.bias"] = []int{D, c.Intermediate}, []int{c.Intermediate}
		s[p+"mlp.linear_fc2.weight"], s[p+"mlp.linear_fc2.bias"] = []int{c.Intermediate, D}, []int{D}
	}
	merger("merger.", D)
	for i := range c.Deepstack {
		merger("deepstack_merger_list."+itoa(i)+".", M)
	}
	return s
}

// TestMetalAuditReleaseShapes builds (without running) the graphs the
// encoder makes at the release's shapes, for every weight type the plan
// can pick, and asserts ggml-metal runs every node: no silent CPU fallback
// on a Mac.
func TestMetalAuditReleaseShapes(t *testing.T) {
	cfg, err := arch.ReleaseQwen()
	if err != nil {
		t.Fatal(err)
	}
	b := newBackend(t)
	tc := cfg.Text
	audit := func(name string, g *ggml.Graph) {
		for _, f := range ggml.Audit(g) {
			t.Errorf("%s: %s", name, f)
		}
		t.Logf("%s: %d nodes audited", name, len(g.Ops()))
	}
	kvs := []struct {
		kv ggml.Storage
		dt ggml.DType // how the encoder keeps K/V for kv
	}{{ggml.Storage{}, b.KVType()}, {ggml.StoreAs(ggml.F32), ggml.F32}}
	for _, wt := range []ggml.DType{ggml.BF16, ggml.F16, ggml.Q8_0} {
		// 1100 query rows over 1600 keys: three query chunks, a key prefix.
		const n, e = 1100, 1600
		var l TextLayer
		placeholderWeights(t, b, &l, textShapes(tc), wt)
		g := b.NewGraph(0)
		x := g.Input("x", ggml.F32, tc.Hidden, n)
		pos := g.Input("pos", ggml.I32, 4*n)
		k, v := l.KeysValues(g, x, pos, tc)
		g.Output(g.Cast(k, b.KVType()), g.Cast(v, b.KVType()))
		audit("keys/values "+wt.String(), g)
		g.Free()

		for _, kv := range kvs {
			g = b.NewGraph(0)
			x = g.Input("x", ggml.F32, tc.Hidden, n)
			pos = g.Input("pos", ggml.I32, 4*n)
			kin := g.Input("k", kv.dt, tc.HeadDim, tc.KVHeads, e)
			vin := g.Input("v", kv.dt, tc.HeadDim, tc.KVHeads, e)
			g.Output(l.Forward(g, x, pos, kin, vin, tc, defaultQueryChunk, kv.kv, "blk.0"))
			audit("layer "+wt.String()+" K/V "+kv.dt.String(), g)
			g.Free()
		}
	}
	vc := cfg.Vision
	vc.Depth, vc.Deepstack = 3, []int{0, 1, 2} // the same ops as 27 blocks, cheaper to build
	for _, it := range []Item{{Height: 64, Width: 96}, {Height: 768, Width: 1344}} {
		tw := newVisionTower(vc)
		placeholderWeights(t, b, &tw, visionShapes(vc), ggml.BF16)
		g := b.NewGraph(0)
		for i := 0; i < vc.TemporalPatch; i++ {
			it.Frames = append(it.Frames, make([]float32, vc.InChannels*it.Height*it.Width))
		}
		merged, deep := tw.Forward(g, declareVisionInputs(g, vc, it), vc, ggml.Storage{})
		g.Output(merged)
		g.Output(deep...)
		audit("vision "+itoa(it.Width)+"x"+itoa(it.Height), g)
		g.Free()
	}
}

func TestBindFieldsNames(t *testing.T) {
	tw := newVisionTower(VisionConfig{Depth: 2, Deepstack: []int{1}})
	names := weights.Fields("model.visual.", &tw)
	joined := strings.Join(names, " ")
	for _, want := range []string{"model.visual.blocks.1.attn.qkv.bias", "model.visual.deepstack_merger_list.0.linear_fc2.weight", "model.visual.pos_embed.weight"} {
		if !strings.Contains(joined, want) {
			t.Errorf("missing %s in %v", want, names)
		}
	}
	if n := reflect.TypeOf(VisionBlock{}).NumField(); len(names) != 3+2*n+6*2 {
		t.Errorf("%d bound names, want %d", len(names), 3+2*n+12)
	}
}
