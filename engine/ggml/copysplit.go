package ggml

import "math"

// copyLimit is the most bytes one copy op may span on either side, counted
// as ggml_nbytes counts them (a view's reach over its source, not its
// element count): ggml-cuda's copy kernels index with int and
// GGML_ASSERT(ggml_nbytes(src) <= INT_MAX) above it, which aborts the
// process. Measured on the H200: the DiT's v view of the fused QKV at
// 37,810 rows reaches 3.25 GB. A variable so tests can lower it.
var copyLimit = int64(math.MaxInt32)

// span is ggml_nbytes(t): the bytes from t's first element to its last.
func span(t *Tensor) int64 {
	n := int64(t.dt.RowBytes(int(t.ne[0])))
	for i := 1; i < 4; i++ {
		n += (t.ne[i] - 1) * t.nb[i]
	}
	return n
}

// splitCopy applies one (a Cont or Cast of its argument) to a, in pieces
// along a's widest-reaching axis when a single copy would span more than
// copyLimit on either side, joining the pieces with Concat, which is what
// one(a) would have returned (contiguous, same shape and type). outElem is
// the result's bytes per element.
func (g *Graph) splitCopy(a *Tensor, outElem float64, one func(*Tensor) *Tensor) *Tensor {
	out := int64(float64(a.Elements()) * outElem)
	if span(a) <= copyLimit && out <= copyLimit {
		return one(a)
	}
	ax := 1
	for i := 2; i < 4; i++ {
		if (a.ne[i]-1)*a.nb[i] > (a.ne[ax]-1)*a.nb[ax] {
			ax = i
		}
	}
	n := int(a.ne[ax])
	if n < 2 {
		return one(a) // nothing to split along; ggml checks what is left
	}
	pieces := int(max(span(a), out)/copyLimit) + 1
	per := (n + pieces - 1) / pieces
	shape := []int{int(a.ne[0]), int(a.ne[1]), int(a.ne[2]), int(a.ne[3])}
	// A unit axis's stride is never used, and ggml_permute computes strides
	// in int, so past 2 GiB it can hold garbage: give View a valid one.
	strides := make([]int, 3)
	for i := 1; i < 4; i++ {
		strides[i-1] = int(a.nb[i])
		if a.ne[i] == 1 {
			strides[i-1] = int(a.nb[i-1] * a.ne[i-1])
		}
	}
	var parts []*Tensor
	for s := 0; s < n; s += per {
		sh := append([]int(nil), shape...)
		sh[ax] = min(per, n-s)
		parts = append(parts, g.splitCopy(g.View(a, s*int(a.nb[ax]), sh, strides), outElem, one))
	}
	for len(parts) > 1 { // balanced, as Attention joins its chunks
		var next []*Tensor
		for i := 0; i+1 < len(parts); i += 2 {
			next = append(next, g.Concat(parts[i], parts[i+1], ax))
		}
		if len(parts)%2 == 1 {
			next = append(next, parts[len(parts)-1])
		}
		parts = next
	}
	return parts[0]
}
