package ggml

// BilinearUp2 doubles axes 0 and 1 of x [W, H, C, N] (f32) with bilinear
// interpolation, half-pixel centres and edge clamping: PyTorch's
// interpolate(scale_factor=2, mode="bilinear", align_corners=False). ggml's
// bilinear UPSCALE does not run on Metal; this form uses only VIEW, CONCAT,
// SCALE, ADD, RESHAPE and CONT, which do. Per axis: out[2i] = ¾x[i] + ¼x[i-1],
// out[2i+1] = ¾x[i] + ¼x[i+1].
func (g *Graph) BilinearUp2(x *Tensor) *Tensor {
	const op = "BilinearUp2"
	g.own(op, x)
	g.need(op, x.dt == F32 && x.ne[3] == 1, "%s must be f32 with axis 3 of 1 (fold N into C)", x)
	if !x.Contiguous() {
		x = g.Cont(x)
	}
	x = g.up2Axis0(x)
	// axis 1: swap it to the front, double, swap back
	x = g.Cont(g.Permute(x, 1, 0, 2, 3))
	x = g.up2Axis0(x)
	return g.Cont(g.Permute(x, 1, 0, 2, 3))
}

// up2Axis0 doubles axis 0 of contiguous x [W, A, B, C].
func (g *Graph) up2Axis0(x *Tensor) *Tensor {
	w := int(x.ne[0])
	rest := []int{int(x.ne[1]), int(x.ne[2]), int(x.ne[3])}
	strides := []int{int(x.nb[1]), int(x.nb[2]), int(x.nb[3])}
	col := func(from, n int) *Tensor {
		return g.View(x, from*4, append([]int{n}, rest...), strides)
	}
	prev, next := col(0, 1), col(w-1, 1) // clamped neighbours at the edges
	if w > 1 {
		prev = g.Concat(col(0, 1), col(0, w-1), 0)
		next = g.Concat(col(1, w-1), col(w-1, 1), 0)
	} else {
		prev, next = g.Cont(prev), g.Cont(next)
	}
	x34 := g.Scale(x, 0.75)
	even := g.Add(x34, g.Scale(prev, 0.25))
	odd := g.Add(x34, g.Scale(next, 0.25))
	// interleave: [1, W, ...] pairs concatenated on a new fastest axis
	shape := append([]int{1, w}, rest[:2]...)
	e := g.Reshape(even, shape...)
	o := g.Reshape(odd, shape...)
	y := g.Concat(e, o, 0) // [2, W, A, B]
	return g.Reshape(y, append([]int{2 * w}, rest...)...)
}
