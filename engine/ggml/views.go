package ggml

import "math"

// Layout ops: reshape, views, permutes, copies, concatenation, padding,
// gathering and resampling.

// Reshape returns a view of contiguous a with a new ggml-order shape of the
// same element count.
func (g *Graph) Reshape(a *Tensor, shape ...int) *Tensor {
	const op = "Reshape"
	g.own(op, a)
	ne, _ := checkShape(op, a.dt, shape)
	g.need(op, a.Contiguous(), "%s is not contiguous (use Cont first)", a)
	g.need(op, ne[0]*ne[1]*ne[2]*ne[3] == int64(a.Elements()), "%s cannot be reshaped to %v", a, shape)
	return g.wrap(cReshape(g.ctx, a.h, ne))
}

// View returns a strided view of a: shape (1-4 axes), byte strides for axes
// 1..len(shape)-1 (nil: dense strides for the new shape, i.e. a contiguous
// block of a), and a byte offset. The view must
// lie inside a's underlying data.
func (g *Graph) View(a *Tensor, offset int, shape []int, strides []int) *Tensor {
	const op = "View"
	g.own(op, a)
	ne, dims := checkShape(op, a.dt, shape)
	var nb [4]int64
	nb[0] = int64(a.dt.BlockBytes())
	for i := 1; i < 4; i++ {
		switch {
		case i < dims && strides != nil:
			g.need(op, len(strides) == dims-1, "got %d strides for %d axes (want %d)", len(strides), dims, dims-1)
			nb[i] = int64(strides[i-1])
		case i == 1: // a row of a block type is ne0/blocksize blocks, not ne0 of them
			nb[i] = int64(a.dt.RowBytes(int(ne[0])))
		default:
			nb[i] = nb[i-1] * ne[i-1]
		}
		g.need(op, nb[i] > 0, "stride %d of view of %s is not positive", i, a)
	}
	g.need(op, offset >= 0, "negative offset %d into %s", offset, a)
	offs, size := cViewBounds(a.h)
	span := int64(a.dt.RowBytes(int(ne[0])))
	dense := span * ne[1] * ne[2] * ne[3]
	for i := 1; i < 4; i++ {
		span += (ne[i] - 1) * nb[i]
	}
	end := int64(offs+offset) + max(span, dense)
	g.need(op, end <= int64(size), "view %v at offset %d reaches byte %d of %s, which has %d", shape, offset, end-int64(offs), a, int64(size-offs))
	return g.wrap(cView(g.ctx, a.h, ne, [3]int64{nb[1], nb[2], nb[3]}, int64(offset)))
}

// Permute moves axis i of a to position axes[i] (ggml's convention, the
// inverse of torch.permute's). axes must be a permutation of 0..3; pass all 4.
func (g *Graph) Permute(a *Tensor, axes ...int) *Tensor {
	const op = "Permute"
	g.own(op, a)
	g.need(op, len(axes) == 4, "want 4 axes, got %v", axes)
	seen := [4]bool{}
	for _, x := range axes {
		g.need(op, x >= 0 && x < 4 && !seen[x], "%v is not a permutation of 0..3", axes)
		seen[x] = true
	}
	for i := 1; i < 4; i++ {
		// ggml_permute holds strides in int: a larger one would be corrupted.
		g.need(op, a.ne[i] == 1 || a.nb[i] <= math.MaxInt32, "%s: stride %d of axis %d exceeds ggml_permute's int", a, a.nb[i], i)
	}
	return g.wrap(cPermute(g.ctx, a.h, [4]int{axes[0], axes[1], axes[2], axes[3]}))
}

// Transpose swaps axes 0 and 1 (a view; use Cont to make it dense).
func (g *Graph) Transpose(a *Tensor) *Tensor {
	g.own("Transpose", a)
	return g.wrap(cUnary(g.ctx, uTranspose, a.h))
}

// Cont returns a contiguous copy of a (a view or permute). A copy that
// would reach past copyLimit is made in pieces (see splitCopy).
func (g *Graph) Cont(a *Tensor) *Tensor {
	g.own("Cont", a)
	g.need("Cont", !a.dt.Quantized() || a.Contiguous(), "%s: quantized views cannot be copied", a)
	elem := float64(a.dt.RowBytes(int(a.ne[0]))) / float64(a.ne[0])
	return g.splitCopy(a, elem, func(p *Tensor) *Tensor { return g.wrap(cUnary(g.ctx, uCont, p.h)) })
}

// Cast returns a converted to dt (f32 to f16/bf16/q8_0; f16, bf16 or q8_0 to f32).
func (g *Graph) Cast(a *Tensor, dt DType) *Tensor {
	const op = "Cast"
	g.own(op, a)
	ok := (a.dt == F32 && (dt == F32 || dt == F16 || dt == BF16 || dt == Q8_0)) ||
		((a.dt == F16 || a.dt == BF16 || a.dt == Q8_0) && dt == F32) || a.dt == dt
	g.need(op, ok, "cannot convert %s to %s", a, dt)
	g.need(op, a.ne[0]%int64(dt.BlockSize()) == 0, "%s: ne0 is not a multiple of %s's block", a, dt)
	elem := float64(dt.RowBytes(int(a.ne[0]))) / float64(a.ne[0])
	return g.splitCopy(a, elem, func(p *Tensor) *Tensor { return g.wrap(cCast(g.ctx, p.h, dt)) })
}

// Cpy copies a into dst (same element count; dst's dtype, conversion as in
// Cast) and returns the result node; the copy happens when it is computed.
func (g *Graph) Cpy(a, dst *Tensor) *Tensor {
	const op = "Cpy"
	g.own(op, a, dst)
	g.need(op, a.Elements() == dst.Elements(), "%s and %s differ in element count", a, dst)
	ok := a.dt == dst.dt || (a.dt == F32 && dst.dt != I32) || dst.dt == F32
	g.need(op, ok, "cannot copy %s into %s", a, dst)
	return g.wrap(cBinary(g.ctx, bCpy, a.h, dst.h))
}

// Concat joins a and b along axis dim; the other axes must match.
func (g *Graph) Concat(a, b *Tensor, dim int) *Tensor {
	const op = "Concat"
	g.own(op, a, b)
	g.need(op, dim >= 0 && dim < 4, "axis %d out of range", dim)
	g.need(op, a.dt == b.dt, "%s and %s differ in dtype", a, b)
	g.need(op, !a.dt.Quantized(), "%s: quantized tensors cannot be concatenated", a)
	for i := range 4 {
		g.need(op, i == dim || a.ne[i] == b.ne[i], "%s and %s differ on axis %d", a, b, i)
	}
	return g.wrap(cConcat(g.ctx, a.h, b.h, dim))
}

// GetRows gathers rows (axis 1) of a [E, R, A2, A3] by i32 indices idx
// [N, A2, A3]: the result is [E, N, A2, A3], f32 unless a is i32.
func (g *Graph) GetRows(a, idx *Tensor) *Tensor {
	const op = "GetRows"
	g.own(op, a, idx)
	g.need(op, idx.dt == I32, "indices %s must be i32", idx)
	g.need(op, idx.ne[1] == a.ne[2] && idx.ne[2] == a.ne[3] && idx.ne[3] == 1, "indices %s do not match table %s (want [N, %d, %d])", idx, a, a.ne[2], a.ne[3])
	return g.wrap(cBinary(g.ctx, bGetRows, a.h, idx.h))
}

// Pad appends zeros after the end of each axis: after[i] elements on axis i
// (1 to 4 values). Only trailing padding runs on Metal; use PadLeft (which
// concatenates zeros) for leading padding.
func (g *Graph) Pad(a *Tensor, after ...int) *Tensor {
	const op = "Pad"
	g.own(op, a)
	g.need(op, len(after) >= 1 && len(after) <= 4, "want 1 to 4 pad sizes, got %v", after)
	g.need(op, a.dt == F32, "%s must be f32", a)
	var p [8]int
	for i, n := range after {
		g.need(op, n >= 0, "negative padding %v", after)
		p[2*i+1] = n
	}
	return g.wrap(cPad(g.ctx, a.h, p))
}

// PadLeft prepends n zeros on axis dim by concatenating a zero tensor: the
// Metal-safe form of a leading (e.g. causal) pad. zeros must be a graph
// input or weight of shape a with axis dim of size >= n, filled with zeros;
// ZerosLike-style inputs are the caller's, so the same zero tensor can serve
// many pads.
func (g *Graph) PadLeft(a, zeros *Tensor, dim, n int) *Tensor {
	const op = "PadLeft"
	g.own(op, a, zeros)
	g.need(op, dim >= 0 && dim < 4 && n > 0, "bad axis %d or size %d", dim, n)
	g.need(op, zeros.dt == a.dt && zeros.ne[dim] >= int64(n), "zeros %s too small for %d on axis %d of %s", zeros, n, dim, a)
	shape := [4]int{int(a.ne[0]), int(a.ne[1]), int(a.ne[2]), int(a.ne[3])}
	shape[dim] = n
	for i := range 4 {
		g.need(op, i == dim || zeros.ne[i] == a.ne[i], "zeros %s do not match %s on axis %d", zeros, a, i)
	}
	z := zeros
	if zeros.ne[dim] != int64(n) {
		z = g.View(zeros, 0, shape[:], []int{int(zeros.nb[1]), int(zeros.nb[2]), int(zeros.nb[3])})
	}
	return g.Concat(z, a, dim)
}

// Resize mode for Interpolate.
type Resize int

const (
	// Nearest is nearest-neighbour resampling (ggml UPSCALE, Metal-supported).
	Nearest Resize = iota
	// Bilinear is ggml's bilinear UPSCALE (half-pixel centres). Metal does
	// not run it (CPU fallback); prefer BilinearMetal in graphs for a Mac.
	Bilinear
)

// Interpolate resamples a (f32) to the given ggml-order shape (1 to 4 values).
func (g *Graph) Interpolate(a *Tensor, mode Resize, shape ...int) *Tensor {
	const op = "Interpolate"
	g.own(op, a)
	g.need(op, a.dt == F32, "%s must be f32", a)
	ne, _ := checkShape(op, F32, shape)
	m := uint32(scaleNearest)
	if mode == Bilinear {
		m = scaleBilinear
	}
	return g.wrap(cInterpolate(g.ctx, a.h, ne, m))
}
