package textenc

import (
	"math"

	"h3studio/engine/ggml"
)

// causalAttention is causal grouped-query flash attention over query rows
// that are the last n of the l keys (q [hd, n, H] f32, k/v [hd, l, Hkv]),
// processed in query chunks of at most chunk rows: chunk c sees only the
// keys up to its last row, and its mask (visible keys x padded chunk rows)
// is assembled on the device from two shared inputs, a zero block and one
// chunk-sized triangle, so no input or buffer grows as l squared. The
// result is [hd, H, n] f32.
//
// deviation: engine/ggml's Attention does the same with the backend's K/V
// type; this variant takes the K/V type from the caller so the f32 parity
// tests can run with f32 K/V (bf16 K/V alone costs ~1e-3 relative error).
func causalAttention(g *ggml.Graph, q, k, v *ggml.Tensor, chunk int, kvType ggml.DType, name string) *ggml.Tensor {
	hd, n, l := q.Ne(0), q.Ne(1), k.Ne(1)
	if n > l {
		panic("textenc: causal attention with more queries than keys")
	}
	chunk = max(1, min(chunk, n, ggml.MaxAttentionRows))
	if k.DType() != kvType {
		k = g.Cast(k, kvType)
	}
	if v.DType() != kvType {
		v = g.Cast(v, kvType)
	}
	scale := float32(1 / math.Sqrt(float64(hd)))
	pad := (chunk + maskPad - 1) / maskPad * maskPad
	off := l - n // keys before the first query row
	// zeros [pad, off+n] and tri [pad, chunk]: transposed mask pieces, so
	// every piece a chunk needs is a contiguous prefix.
	var zeros *ggml.Tensor
	if last := off + (n-1)/chunk*chunk; last > 0 {
		zeros = g.Input(name+".mask0", ggml.F32, pad, last)
		zeros.SetF32(make([]float32, zeros.Elements()))
	}
	tri := g.Input(name+".tri", ggml.F32, pad, chunk)
	tv := make([]float32, pad*chunk)
	ninf := float32(math.Inf(-1))
	for j := 0; j < chunk; j++ { // key j of the chunk's own block
		for i := 0; i < pad; i++ { // query row i
			if j > i {
				tv[j*pad+i] = ninf
			}
		}
	}
	tri.SetF32(tv)
	var parts []*ggml.Tensor
	for s := 0; s < n; s += chunk {
		rows := min(chunk, n-s)
		keys := off + s + rows
		qc := g.View(q, s*q.Nb(1), []int{hd, rows, q.Ne(2)}, []int{q.Nb(1), q.Nb(2)})
		kc := g.View(k, 0, []int{hd, keys, k.Ne(2)}, []int{k.Nb(1), k.Nb(2)})
		vc := g.View(v, 0, []int{v.Ne(0), keys, v.Ne(2)}, []int{v.Nb(1), v.Nb(2)})
		mt := g.View(tri, 0, []int{pad, rows}, []int{tri.Nb(1)})
		if past := off + s; past > 0 {
			z := g.View(zeros, 0, []int{pad, past}, []int{zeros.Nb(1)})
			mt = g.Concat(z, mt, 1)
		}
		mask := g.Cast(g.Transpose(mt), ggml.F16).SetName("%s.mask.%d", name, s)
		parts = append(parts, g.FlashAttn(qc, kc, vc, mask, scale).SetName("%s.out.%d", name, s))
	}
	for len(parts) > 1 { // a balanced tree copies each output once per level
		var next []*ggml.Tensor
		for i := 0; i+1 < len(parts); i += 2 {
			next = append(next, g.Concat(parts[i], parts[i+1], 2))
		}
		if len(parts)%2 == 1 {
			next = append(next, parts[len(parts)-1])
		}
		parts = next
	}
	return parts[0]
}

// maskPad pads mask rows as ggml's flash attention expects (a multiple of
// its 64-row blocks).
const maskPad = 64
