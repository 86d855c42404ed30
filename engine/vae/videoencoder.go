package vae

import (
	"fmt"

	"h3studio/engine/ggml"
	"h3studio/engine/tap"
)

// Video encoder: a causal 3-D CNN (EncoderFCN3D). Activations are ggml
// [W, H, C, T]. Every 3x3x3 conv reflect-pads space by one and prepends two
// zero frames (causal); downsampling convs reflect-pad right and bottom only.
// ref: ComfyUI comfy/ldm/minimax/vae.py CausalConv3d, ResnetBlock3D,
// Downsample3D, EncoderFCN3D.

// conv3d is a cubic Conv3d (kernel 1 or 3) in ggml.Conv3D's weight layout.
type conv3d struct {
	W *ggml.Tensor `st:"weight" shape:"cout,cin,k,k,k" ggml:"k,k,cin,cout_k" transform:"conv3d"`
	B *ggml.Tensor `st:"bias" shape:"cout" ggml:"1,1,cout,1"`

	cin, cout, k int
}

func newConv3D(cin, cout, k int) conv3d { return conv3d{cin: cin, cout: cout, k: k} }

func (c *conv3d) Dims() map[string]int64 {
	return map[string]int64{"cin": int64(c.cin), "cout": int64(c.cout), "k": int64(c.k), "cout_k": int64(c.cout * c.k)}
}

// forward convolves x [W, H, Cin, T]: reflect padding (left, right, top,
// bottom), causal zero frames for k > 1, and the given strides (W, H, T).
// The im2col of a conv is as large as its input times k³ (0.9 GB per frame
// for the release's first level at 256 px), so output frames are computed
// in groups whose im2col stays within budget bytes (0: one group); each
// group is a frame-range view, so results are unchanged.
func (c *conv3d) forward(g *ggml.Graph, x *ggml.Tensor, pad [4]int, stride [3]int, budget int64) *ggml.Tensor {
	x = reflectPad(g, x, pad)
	if c.k > 1 {
		x = g.Concat(g.Zeros(ggml.F32, x.Ne(0), x.Ne(1), x.Ne(2), c.k-1), x, 3)
	}
	st := max(stride[2], 1)
	ot := (x.Ne(3)-c.k)/st + 1
	group := ot
	if budget > 0 {
		s := max(stride[0], 1)
		perFrame := int64(c.k*c.k*x.Ne(2)) * int64((x.Ne(0)-c.k)/s+1) * int64((x.Ne(1)-c.k)/s+1) * 4
		group = min(ot, max(1, int((budget/perFrame-int64(c.k))/int64(st))+1))
	}
	var y *ggml.Tensor
	for o0 := 0; o0 < ot; o0 += group {
		o1 := min(ot, o0+group)
		xs := x
		if group < ot {
			xs = g.View(x, o0*st*x.Nb(3), []int{x.Ne(0), x.Ne(1), x.Ne(2), (o1-1-o0)*st + c.k}, nil)
		}
		yi := g.Conv3D(xs, c.W, c.k, ggml.Conv3DOptions{Stride: stride})
		if y == nil {
			y = yi
		} else {
			y = g.Concat(y, yi, 3)
		}
	}
	return g.Add(y, c.B)
}

// pixelConv is conv_in, whose input is the 3 colour channels: its
// im2col rows (channels x 3 x 3) are padded with zero channels to
// pixelLanes, because ggml's blocked CPU matmul takes only rows that are
// a multiple of its 8 lanes and otherwise falls back to dot products
// about 8x slower. With 27 values a row, conv_in took an eighth of the
// demo model's encode; zero weights on zero channels leave its sums as
// they were.
type pixelConv struct {
	W *ggml.Tensor `st:"weight" shape:"cout,cin,k,k,k" ggml:"k,k,lanes,cout_k" transform:"conv3d_lanes"`
	B *ggml.Tensor `st:"bias" shape:"cout" ggml:"1,1,cout,1"`

	cin, cout, k int
}

// pixelLanes is conv_in's input width once padded.
const pixelLanes = 8

func newPixelConv(cin, cout, k int) pixelConv { return pixelConv{cin: cin, cout: cout, k: k} }

func (c *pixelConv) Dims() map[string]int64 {
	return map[string]int64{"cin": int64(c.cin), "cout": int64(c.cout), "k": int64(c.k), "cout_k": int64(c.cout * c.k), "lanes": pixelLanes}
}

// forward pads x [W, H, cin, T] to pixelLanes channels and convolves it.
func (c *pixelConv) forward(g *ggml.Graph, x *ggml.Tensor, pad [4]int, stride [3]int, budget int64) *ggml.Tensor {
	if c.cin < pixelLanes {
		x = g.Concat(x, g.Zeros(ggml.F32, x.Ne(0), x.Ne(1), pixelLanes-c.cin, x.Ne(3)), 2)
	}
	padded := conv3d{W: c.W, B: c.B, cin: pixelLanes, cout: c.cout, k: c.k}
	return padded.forward(g, x, pad, stride, budget)
}

// reflectPad pads axes 0 (left, right) and 1 (top, bottom) of x by 0 or 1
// element with reflection (the neighbour of the edge, as F.pad "reflect"),
// from views and concatenations only.
func reflectPad(g *ggml.Graph, x *ggml.Tensor, pad [4]int) *ggml.Tensor {
	for axis := range 2 {
		before, after := pad[2*axis], pad[2*axis+1]
		if before == 0 && after == 0 {
			continue
		}
		if before > 1 || after > 1 || x.Ne(axis) < 2 {
			panic(fmt.Sprintf("vae: reflect pad %v of %v: only 1 element of an axis of 2 or more", pad, x.Shape()))
		}
		slice := func(i int) *ggml.Tensor {
			shape := []int{x.Ne(0), x.Ne(1), x.Ne(2), x.Ne(3)}
			shape[axis] = 1
			return g.View(x, i*x.Nb(axis), shape, []int{x.Nb(1), x.Nb(2), x.Nb(3)})
		}
		n := x.Ne(axis)
		if before == 1 {
			x = g.Concat(slice(1), x, axis)
		}
		if after == 1 {
			// after the left pad the last element sits at n (before+n-1)
			x = g.Concat(x, slice(before+n-2), axis)
		}
	}
	return x
}

// groupNorm is the per-frame GroupNorm (32 groups, eps 1e-6) with its affine part.
type groupNorm struct {
	W *ggml.Tensor `st:"weight" shape:"c" ggml:"1,1,c,1"`
	B *ggml.Tensor `st:"bias" shape:"c" ggml:"1,1,c,1"`
	c int
}

func (n *groupNorm) Dims() map[string]int64 { return map[string]int64{"c": int64(n.c)} }

// silu returns SiLU(GroupNorm(x)) for x [W, H, C, T]: statistics per frame.
func (n *groupNorm) silu(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	h := g.GroupNorm(x, groupNormGroups, groupNormEps)
	return g.SiLU(g.Add(g.Mul(h, n.W), n.B))
}

// resBlock is ResnetBlock3D.
type resBlock struct {
	Norm1    groupNorm `st:"norm1"`
	Conv1    conv3d    `st:"conv1"`
	Norm2    groupNorm `st:"norm2"`
	Conv2    conv3d    `st:"conv2"`
	Shortcut *conv3d   `st:"nin_shortcut"` // when the width changes
}

func newResBlock(in, out int) resBlock {
	b := resBlock{Norm1: groupNorm{c: in}, Conv1: newConv3D(in, out, 3), Norm2: groupNorm{c: out}, Conv2: newConv3D(out, out, 3)}
	if in != out {
		sc := newConv3D(in, out, 1)
		b.Shortcut = &sc
	}
	return b
}

// Forward: x + conv2(silu(norm2(conv1(silu(norm1(x)))))), x through the
// 1x1x1 shortcut when the width changes.
func (b *resBlock) Forward(g *ggml.Graph, x *ggml.Tensor, budget int64) *ggml.Tensor {
	same := [4]int{1, 1, 1, 1}
	h := b.Conv1.forward(g, b.Norm1.silu(g, x), same, [3]int{}, budget)
	h = b.Conv2.forward(g, b.Norm2.silu(g, h), same, [3]int{}, budget)
	if b.Shortcut != nil {
		x = b.Shortcut.forward(g, x, [4]int{}, [3]int{}, budget)
	}
	return g.Add(h, x)
}

type encLevel struct {
	Blocks         []resBlock `st:"block"`
	Down           *conv3d    `st:"downsample.conv"` // when the level downsamples
	space, tstride int
}

// videoEncoder is EncoderFCN3D followed by quant_conv.
type videoEncoder struct {
	ConvIn  pixelConv  `st:"encoder.conv_in"`
	Levels  []encLevel `st:"encoder.down"`
	NormOut groupNorm  `st:"encoder.norm_out"`
	ConvOut conv3d     `st:"encoder.conv_out"`
	Quant   conv3d     `st:"quant_conv"`
}

// newVideoEncoder lays out the encoder c describes, weights not loaded.
func newVideoEncoder(c *VideoConfig) *videoEncoder {
	s := &c.Source
	in := s.Ch * s.ChMult[0]
	e := &videoEncoder{ConvIn: newPixelConv(s.InChannels, in, 3), Levels: make([]encLevel, len(s.ChMult))}
	for i, m := range s.ChMult {
		out := s.Ch * m
		lv := &e.Levels[i]
		lv.space, lv.tstride = s.SpaceDown[i], s.TimeDown[i]
		for range s.NumResBlocks {
			lv.Blocks = append(lv.Blocks, newResBlock(in, out))
			in = out
		}
		if lv.space*lv.tstride > 1 {
			down := newConv3D(out, out, 3)
			lv.Down = &down
		}
	}
	e.NormOut = groupNorm{c: in}
	e.ConvOut = newConv3D(in, 2*s.ZChannels, 3)
	e.Quant = newConv3D(2*s.ZChannels, 2*s.EmbedDim, 1)
	return e
}

// Forward maps normalised pixels x [W, H, 3, T] to the posterior moments
// [W/16, H/16, 2·latent, T'] (mean first), T' = 1 + (T-1)/4 for the release.
// budget bounds each conv's im2col in bytes (0: unbounded).
func (e *videoEncoder) Forward(g *ggml.Graph, x *ggml.Tensor, budget int64, tp *tap.Graph) *ggml.Tensor {
	h := e.ConvIn.forward(g, x, [4]int{1, 1, 1, 1}, [3]int{}, budget)
	tp.Mark("enc.conv_in", h)
	for i := range e.Levels {
		lv := &e.Levels[i]
		for j := range lv.Blocks {
			h = lv.Blocks[j].Forward(g, h, budget)
			tp.Mark(fmt.Sprintf("enc.down.%d.block.%d", i, j), h)
		}
		if lv.Down != nil {
			pad := [4]int{}
			if lv.space == 2 {
				pad = [4]int{0, 1, 0, 1}
			}
			h = lv.Down.forward(g, h, pad, [3]int{lv.space, lv.space, lv.tstride}, budget)
			tp.Mark(fmt.Sprintf("enc.down.%d.downsample", i), h)
		}
	}
	h = e.ConvOut.forward(g, e.NormOut.silu(g, h), [4]int{1, 1, 1, 1}, [3]int{}, budget)
	tp.Mark("enc.out", h)
	m := e.Quant.forward(g, h, [4]int{}, [3]int{}, budget)
	tp.Mark("moments", m)
	return m
}
