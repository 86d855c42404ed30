package textenc

import (
	"fmt"
	"math"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// VisionTower is Qwen3-VL's ViT: a Conv3d patch embedding (applied as a
// matmul on patch rows), an interpolated learned position table, pre-norm
// blocks with 2-D rotary full attention, the 2x2 merger, and the deepstack
// mergers tapped after the configured blocks.
// ref: transformers modeling_qwen3_vl.py Qwen3VLVisionModel
type VisionTower struct {
	PatchEmbed *ggml.Tensor  `st:"patch_embed.proj.weight" shape:"hidden,in_ch,t_patch,patch,patch"` // ggml [C*T*P*P, hidden]
	PatchBias  *ggml.Tensor  `st:"patch_embed.proj.bias" shape:"hidden"`
	PosEmbed   *ggml.Tensor  `st:"pos_embed.weight" shape:"positions,hidden"` // ggml [hidden, side*side]
	Blocks     []VisionBlock `st:"blocks"`
	Merger     PatchMerger   `st:"merger"`
	Deepstack  []PatchMerger `st:"deepstack_merger_list"`
	cfg        VisionConfig  // resolves the shape tags
}

// VisionBlock is one ViT block: LayerNorm, attention, LayerNorm, MLP.
type VisionBlock struct {
	Norm1W   *ggml.Tensor `st:"norm1.weight"`
	Norm1B   *ggml.Tensor `st:"norm1.bias"`
	QKV      *ggml.Tensor `st:"attn.qkv.weight" shape:"hidden3,hidden"`
	QKVBias  *ggml.Tensor `st:"attn.qkv.bias"`
	Proj     *ggml.Tensor `st:"attn.proj.weight" shape:"hidden,hidden"`
	ProjBias *ggml.Tensor `st:"attn.proj.bias"`
	Norm2W   *ggml.Tensor `st:"norm2.weight"`
	Norm2B   *ggml.Tensor `st:"norm2.bias"`
	FC1      *ggml.Tensor `st:"mlp.linear_fc1.weight" shape:"inter,hidden"`
	FC1Bias  *ggml.Tensor `st:"mlp.linear_fc1.bias"`
	FC2      *ggml.Tensor `st:"mlp.linear_fc2.weight" shape:"hidden,inter"`
	FC2Bias  *ggml.Tensor `st:"mlp.linear_fc2.bias"`
}

// PatchMerger maps each 2x2 cell of patches to one language-model token:
// LayerNorm (per patch for the main merger, over the concatenated cell for
// the deepstack ones), then fc1, exact GELU, fc2.
type PatchMerger struct {
	NormW   *ggml.Tensor `st:"norm.weight" shape:"norm"`
	NormB   *ggml.Tensor `st:"norm.bias"`
	FC1     *ggml.Tensor `st:"linear_fc1.weight" shape:"merged,merged"`
	FC1Bias *ggml.Tensor `st:"linear_fc1.bias"`
	FC2     *ggml.Tensor `st:"linear_fc2.weight" shape:"out,merged"`
	FC2Bias *ggml.Tensor `st:"linear_fc2.bias"`
	norm    int          // the width NormW normalises
}

const visionEps = 1e-6

// newVisionTower sizes the slices so the loader binds every block. The
// merger normalises tokens before merging them, the deepstack mergers
// after.
func newVisionTower(c VisionConfig) VisionTower {
	t := VisionTower{Blocks: make([]VisionBlock, c.Depth), Deepstack: make([]PatchMerger, len(c.Deepstack)), cfg: c}
	t.Merger.norm = c.Hidden
	for i := range t.Deepstack {
		t.Deepstack[i].norm = c.Hidden * c.MergeCell()
	}
	return t
}

func (t *VisionTower) Dims() map[string]int64 {
	c := t.cfg
	return map[string]int64{"hidden": int64(c.Hidden), "hidden3": int64(3 * c.Hidden), "in_ch": int64(c.InChannels),
		"t_patch": int64(c.TemporalPatch), "patch": int64(c.Patch), "positions": int64(c.NumPositions),
		"inter": int64(c.Intermediate), "merged": int64(c.Hidden * c.MergeCell()), "out": int64(c.OutHidden)}
}

func (p *PatchMerger) Dims() map[string]int64 { return map[string]int64{"norm": int64(p.norm)} }

// geluTanh is PyTorch's tanh-approximated GELU. On the GPU it is ggml's
// own op; ggml's CPU kernel looks GELU up in an f16 table (~5e-4 relative
// error), so on the CPU it is composed from exact f32 ops instead.
func geluTanh(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	if g.Backend().Caps().GPU {
		return g.GELUTanh(x)
	}
	inner := g.Add(x, g.Scale(g.Mul(g.Sqr(x), x), 0.044715))
	u := g.Tanh(g.Scale(inner, float32(math.Sqrt(2/math.Pi))))
	return g.Scale(g.Add(x, g.Mul(x, u)), 0.5)
}

func affine(g *ggml.Graph, x, w, b *ggml.Tensor) *ggml.Tensor { return g.Add(g.Mul(x, w), b) }
func linear(g *ggml.Graph, w, b, x *ggml.Tensor) *ggml.Tensor { return g.Add(g.MulMat(w, x), b) }

// visionInputs are the per-item graph inputs the host prepares.
type visionInputs struct {
	patches *ggml.Tensor    // [C*T*P*P, N] f32, merge order
	posIdx  [4]*ggml.Tensor // [N] i32 corner rows of the position table
	posW    [4]*ggml.Tensor // [1, N] f32 bilinear weights
	rope    *ggml.Tensor    // [4N] i32: row, col, 0, 0
}

// Forward runs one item (N patches) and returns the merged tokens
// [OutHidden, N/4] and the deepstack features, each [OutHidden, N/4].
func (t *VisionTower) Forward(g *ggml.Graph, in visionInputs, c VisionConfig, kv ggml.Storage) (*ggml.Tensor, []*ggml.Tensor) {
	x := linear(g, t.PatchEmbed, t.PatchBias, in.patches)
	for i := range in.posIdx {
		x = g.Add(x, g.Mul(g.GetRows(t.PosEmbed, in.posIdx[i]), in.posW[i]))
	}
	x.SetName("vision.embed")
	act := func(x *ggml.Tensor) *ggml.Tensor { return geluTanh(g, x) }
	if c.Act == "gelu" {
		act = g.GELU
	}
	var deep []*ggml.Tensor
	for i := range t.Blocks {
		b := &t.Blocks[i]
		x = g.Add(x, b.attention(g, affine(g, g.LayerNorm(x, visionEps), b.Norm1W, b.Norm1B), in.rope, c, kv))
		h := affine(g, g.LayerNorm(x, visionEps), b.Norm2W, b.Norm2B)
		x = g.Add(x, linear(g, b.FC2, b.FC2Bias, act(linear(g, b.FC1, b.FC1Bias, h)))).SetName("vision.blk.%d", i)
		for k, d := range c.Deepstack {
			if d == i {
				deep = append(deep, t.Deepstack[k].forward(g, x, c, true).SetName("vision.deepstack.%d", k))
			}
		}
	}
	return t.Merger.forward(g, x, c, false).SetName("vision.merged"), deep
}

// attention is full (non-causal) multi-head attention over one item's
// patches with the 2-D rotary embedding: the first quarter of each head's
// rotary pairs turns with the patch row, the second with the column.
func (b *VisionBlock) attention(g *ggml.Graph, x, rope *ggml.Tensor, c VisionConfig, kv ggml.Storage) *ggml.Tensor {
	hd, H, N := c.HeadDim(), c.Heads, x.Ne(1)
	qkv := g.Reshape(linear(g, b.QKV, b.QKVBias, x), hd, H, 3, N)
	part := func(i int) *ggml.Tensor {
		return g.Cont(g.View(qkv, i*qkv.Nb(2), []int{hd, H, N}, []int{qkv.Nb(1), qkv.Nb(3)}))
	}
	ro := ggml.RoPEOptions{Mode: ggml.RoPEVision, Dims: hd / 2, Base: float32(c.RoPETheta), Sections: [4]int{hd / 4, hd / 4, 0, 0}}
	q := g.Cont(g.Permute(g.RoPE(part(0), rope, ro), 0, 2, 1, 3)) // [hd, N, H]
	k := g.Cont(g.Permute(g.RoPE(part(1), rope, ro), 0, 2, 1, 3))
	v := g.Cont(g.Permute(part(2), 0, 2, 1, 3))
	a := g.Attention(q, k, v, ggml.AttentionOptions{KV: kv, Name: "vision.attn"}) // [hd, H, N]
	return linear(g, b.Proj, b.ProjBias, g.Reshape(a, hd*H, N))
}

func (m *PatchMerger) forward(g *ggml.Graph, x *ggml.Tensor, c VisionConfig, postShuffle bool) *ggml.Tensor {
	M, n := c.Hidden*c.MergeCell(), x.Ne(1)/c.MergeCell()
	if postShuffle {
		x = affine(g, g.LayerNorm(g.Reshape(x, M, n), visionEps), m.NormW, m.NormB)
	} else {
		x = g.Reshape(affine(g, g.LayerNorm(x, visionEps), m.NormW, m.NormB), M, n)
	}
	return linear(g, m.FC2, m.FC2Bias, g.GELU(linear(g, m.FC1, m.FC1Bias, x)))
}

// declareVisionInputs creates and fills the host-prepared inputs of an item.
func declareVisionInputs(g *ggml.Graph, c VisionConfig, it Item) visionInputs {
	gh, gw := c.Grid(it.Height, it.Width)
	N := gh * gw
	var in visionInputs
	in.patches = g.Input("vision.patches", ggml.F32, c.InChannels*c.TemporalPatch*c.Patch*c.Patch, N)
	in.patches.SetF32(patchify(c, it))
	idx, w := posEmbedInterp(gh, gw, c.SpatialMerge, c.GridSide())
	for i := range in.posIdx {
		in.posIdx[i] = g.Input(fmt.Sprintf("vision.pos_idx.%d", i), ggml.I32, N)
		in.posIdx[i].SetI32(idx[i])
		in.posW[i] = g.Input(fmt.Sprintf("vision.pos_w.%d", i), ggml.F32, 1, N)
		in.posW[i].SetF32(w[i])
	}
	rows, cols := visionRoPEPositions(gh, gw, c.SpatialMerge)
	in.rope = g.Input("vision.rope", ggml.I32, 4*N)
	in.rope.SetI32(append(append(rows, cols...), make([]int32, 2*N)...))
	return in
}

// visionTower loads the tower (once per Model until freeVision).
func (m *Model) visionTower() (*VisionTower, error) {
	if m.vision != nil {
		return &m.vision.t, nil
	}
	s := &visionSlot{t: newVisionTower(m.cfg.Vision)}
	ws, err := m.load("model.visual.", &s.t, nil)
	if err != nil {
		return nil, err
	}
	s.ws = ws
	m.vision = s
	return &s.t, nil
}

// visionFeatures is one item's tower output on the host, row-major.
type visionFeatures struct {
	merged    []float32   // [tokens, OutHidden]
	deepstack [][]float32 // per deepstack index, [tokens, OutHidden]
	tokens    int
}

// encodeItem runs one vision item through the tower: each of its
// TemporalPatch-frame blocks in its own graph, their tokens averaged when
// temporally pooled, then spatially pooled.
func (m *Model) encodeItem(i int, it Item) (*visionFeatures, error) {
	c := m.cfg.Vision
	if err := checkItem(c, it); err != nil {
		return nil, err
	}
	gh, gw := c.Grid(it.Height, it.Width)
	if gh*gw > ggml.MaxAttentionRows {
		return nil, fmt.Errorf("textenc: vision item %dx%d has %d patches, more than one attention call takes (%d); scale it down",
			it.Width, it.Height, gh*gw, ggml.MaxAttentionRows)
	}
	blocks := len(it.Frames) / c.TemporalPatch
	var sum *visionFeatures
	for b := 0; b < blocks; b++ {
		blk := it
		blk.Frames = it.Frames[b*c.TemporalPatch : (b+1)*c.TemporalPatch]
		f, err := m.encodeBlock(fmt.Sprintf("vision item %d block %d (%dx%d)", i, b, it.Width, it.Height), blk)
		if err != nil {
			return nil, err
		}
		if sum == nil {
			sum = f
			continue
		}
		addInto(sum.merged, f.merged)
		for k := range sum.deepstack {
			addInto(sum.deepstack[k], f.deepstack[k])
		}
	}
	if blocks > 1 {
		scaleBy(sum.merged, 1/float32(blocks))
		for k := range sum.deepstack {
			scaleBy(sum.deepstack[k], 1/float32(blocks))
		}
	}
	if _, sp := it.pool(); sp > 1 {
		mh, mw, d := gh/c.SpatialMerge, gw/c.SpatialMerge, c.OutHidden
		sum.merged = poolTokens(sum.merged, mh, mw, d, sp)
		for k := range sum.deepstack {
			sum.deepstack[k] = poolTokens(sum.deepstack[k], mh, mw, d, sp)
		}
	}
	sum.tokens = visionTokens(c, it)
	return sum, nil
}

// encodeBlock runs one TemporalPatch-frame block through the tower.
func (m *Model) encodeBlock(name string, it Item) (*visionFeatures, error) {
	c := m.cfg.Vision
	t, err := m.visionTower()
	if err != nil {
		return nil, err
	}
	g := m.b.NewGraph(0)
	defer g.Free()
	merged, deep := t.Forward(g, declareVisionInputs(g, c, it), c, m.opts.Precision.KV)
	g.Output(merged)
	g.Output(deep...)
	if err := m.compute(name, g); err != nil {
		return nil, err
	}
	gh, gw := c.Grid(it.Height, it.Width)
	f := &visionFeatures{merged: merged.F32(), tokens: gh * gw / c.MergeCell()}
	for _, d := range deep {
		f.deepstack = append(f.deepstack, d.F32())
	}
	return f, nil
}

func addInto(dst, src []float32) {
	for i, v := range src {
		dst[i] += v
	}
}

func scaleBy(x []float32, s float32) {
	for i := range x {
		x[i] *= s
	}
}

// visionSlot holds the loaded tower.
type visionSlot struct {
	t  VisionTower
	ws *weights.Module
}

func (m *Model) freeVision() {
	if m.vision != nil {
		m.vision.ws.Free()
		m.vision = nil
	}
}
