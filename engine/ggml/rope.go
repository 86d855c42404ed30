package ggml

// RoPEMode selects ggml's rotary variant for RoPE.
type RoPEMode int

const (
	// RoPENeoX rotates pairs (i, i+dims/2): the split-half form.
	RoPENeoX RoPEMode = iota
	// RoPEMulti is mRoPE: pair i takes its position from section t, h, w or e
	// (Sections counted in pairs, in order). Positions are 4 per token.
	RoPEMulti
	// RoPEIMRoPE is Qwen3-VL's interleaved mRoPE: pairs cycle t, h, w.
	RoPEIMRoPE
	// RoPEVision is the Qwen-VL vision variant: Dims must be half the head dim.
	RoPEVision
)

// RoPEOptions configures RoPE. Dims 0 means the whole head dim; Base 0
// means 10000.
type RoPEOptions struct {
	Mode     RoPEMode
	Dims     int     // rotated dims (even); the rest pass through
	Base     float32 // frequency base θ: pair i turns by pos·Base^(-2i/Dims)
	Sections [4]int  // mRoPE sections in pairs (t, h, w, e)
}

// RoPE applies ggml's rotary embedding to x [D, H, N, B] (f32, heads before
// tokens) at i32 positions pos: [N] for RoPENeoX, [4N] (all t, then all h,
// w, e) for the multi-axis modes.
func (g *Graph) RoPE(x, pos *Tensor, o RoPEOptions) *Tensor {
	const op = "RoPE"
	g.own(op, x, pos)
	dims := o.Dims
	if dims == 0 {
		dims = int(x.ne[0])
	}
	base := o.Base
	if base == 0 {
		base = 10000
	}
	g.need(op, x.dt == F32 && rowsDense(x), "%s must be f32 with dense rows", x)
	g.need(op, dims > 0 && dims%2 == 0 && int64(dims) <= x.ne[0], "rotated dims %d must be even and at most the head dim of %s", dims, x)
	g.need(op, pos.dt == I32 && pos.Contiguous() && pos.ne[1] == 1 && pos.ne[2] == 1 && pos.ne[3] == 1, "positions %s must be an i32 vector", pos)
	var mode int
	var sec *[4]int
	switch o.Mode {
	case RoPENeoX:
		mode = ropeNeoX
		g.need(op, pos.ne[0] == x.ne[2], "positions %s: want %d (one per token of %s)", pos, x.ne[2], x)
		return g.wrap(cRope(g.ctx, x.h, pos.h, dims, mode, nil, base, 1))
	case RoPEMulti:
		mode = ropeMulti
	case RoPEIMRoPE:
		mode = ropeIMRoPE
	case RoPEVision:
		mode = ropeVision
		g.need(op, int64(dims) == x.ne[0]/2, "vision RoPE rotates half the head dim: dims %d, %s", dims, x)
	default:
		panicf("%s: unknown mode %d", op, o.Mode)
	}
	s := o.Sections
	sum := s[0] + s[1] + s[2] + s[3]
	g.need(op, s[0] > 0 || s[1] > 0 || s[2] > 0, "mRoPE needs a non-empty section, got %v", s)
	g.need(op, s[0] >= 0 && s[1] >= 0 && s[2] >= 0 && s[3] >= 0 && int64(sum) <= x.ne[0], "sections %v do not fit head dim %d", s, x.ne[0])
	g.need(op, pos.ne[0] == 4*x.ne[2], "positions %s: want %d (4 per token of %s)", pos, 4*x.ne[2], x)
	sec = &s
	return g.wrap(cRope(g.ctx, x.h, pos.h, dims, mode, sec, base, 1))
}

// RoPETable rotates the first 2·R dims of x [D, A1, A2, A3] split-half
// (NeoX) style with caller-made tables cos, sin [R, ...] that broadcast over
// x's other axes (e.g. [R, 1, N] for x [D, H, N], or [R, N] for x [D, N, H]
// with per-token rows): out = (x1·cos - x2·sin, x2·cos + x1·sin, rest).
// Positions of any structure (3-axis video grids) live in the tables.
func (g *Graph) RoPETable(x, cos, sin *Tensor) *Tensor {
	const op = "RoPETable"
	g.own(op, x, cos, sin)
	r := cos.ne[0]
	g.need(op, x.dt == F32 && cos.dt == F32 && sin.dt == F32, "x %s, cos %s, sin %s must be f32", x, cos, sin)
	g.need(op, cos.ne == sin.ne, "cos %s and sin %s differ", cos, sin)
	g.need(op, 2*r <= x.ne[0], "tables %s rotate %d dims of %s", cos, 2*r, x)
	strides := []int{int(x.nb[1]), int(x.nb[2]), int(x.nb[3])}
	half := []int{int(r), int(x.ne[1]), int(x.ne[2]), int(x.ne[3])}
	x1 := g.View(x, 0, half, strides)
	x2 := g.View(x, int(r)*4, half, strides)
	o1 := g.Sub(g.Mul(x1, cos), g.Mul(x2, sin))
	o2 := g.Add(g.Mul(x2, cos), g.Mul(x1, sin))
	out := g.Concat(o1, o2, 0)
	if rest := x.ne[0] - 2*r; rest > 0 {
		out = g.Concat(out, g.View(x, int(2*r)*4, []int{int(rest), half[1], half[2], half[3]}, strides), 0)
	}
	return out
}
