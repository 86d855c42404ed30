package ggml

import (
	"math"
	"slices"
)

// MaxAttentionRows is the largest query count one flash-attention call may
// take: ggml-metal indexes query rows with a 16-bit integer.
const MaxAttentionRows = 65535

// DefaultAttentionChunk is the query chunk Attention uses when the options
// leave it 0. Chunks bound the per-call query count and, for causal
// attention, the mask each call needs (chunk x keys).
const DefaultAttentionChunk = 4096

// AttentionOptions configures Attention. The zero value is non-causal
// attention with scale 1/sqrt(head dim), DefaultAttentionChunk and the
// backend's K/V type.
type AttentionOptions struct {
	Causal bool    // query i sees keys j <= i + (keys - queries): prefix-aware causal
	Scale  float32 // score scale; 0 means 1/sqrt(q head dim)
	Chunk  int     // queries per flash-attention call; 0 means DefaultAttentionChunk
	Name   string  // prefix for the names of the nodes it creates (default "attn")
	KV     Storage // K/V dtype (f32, f16 or bf16); zero: the backend's KVType
}

// FlashAttn is one ggml flash_attn_ext call: q [D, N, H, B] f32, k [D, L,
// Hkv, B], v [Dv, L, Hkv, B] (k and v the same dtype: f32, f16 or bf16; H a
// multiple of Hkv for GQA), optional mask f16 contiguous [L, >=N] (0 or
// -inf), broadcast over heads. The result is f32 [Dv, H, N, B] (heads
// before rows, as ggml returns it). N must be at most MaxAttentionRows; use
// Attention for longer queries.
func (g *Graph) FlashAttn(q, k, v, mask *Tensor, scale float32) *Tensor {
	const op = "FlashAttn"
	g.own(op, q, k, v)
	g.need(op, q.dt == F32, "q %s must be f32", q)
	g.need(op, k.dt == v.dt && (k.dt == F32 || k.dt == F16 || k.dt == BF16), "k %s and v %s must share one of f32, f16, bf16", k, v)
	g.need(op, q.ne[0] == k.ne[0] && q.ne[0]%4 == 0, "head dims differ or are not a multiple of 4: q %s, k %s", q, k)
	g.need(op, k.ne[1] == v.ne[1] && k.ne[2] == v.ne[2] && k.ne[3] == v.ne[3], "k %s and v %s differ in keys, heads or batch", k, v)
	g.need(op, q.ne[2]%k.ne[2] == 0, "%d query heads are not a multiple of %d kv heads", q.ne[2], k.ne[2])
	g.need(op, q.ne[3] == k.ne[3], "q %s and k %s differ in batch", q, k)
	g.need(op, q.ne[1] <= MaxAttentionRows, "q %s has more than %d rows (use Attention)", q, MaxAttentionRows)
	g.need(op, rowsDense(q) && rowsDense(k) && rowsDense(v), "q, k and v need unit element stride")
	if mask == nil {
		return g.wrap(cFlashAttn(g.ctx, q.h, k.h, v.h, nil, scale, 0))
	}
	g.own(op, mask)
	g.need(op, mask.dt == F16 && mask.Contiguous(), "mask %s must be contiguous f16", mask)
	g.need(op, mask.ne[0] >= k.ne[1] && mask.ne[1] >= q.ne[1], "mask %s does not cover %d keys x %d queries", mask, k.ne[1], q.ne[1])
	g.need(op, q.ne[2]%mask.ne[2] == 0 && q.ne[3]%mask.ne[3] == 0, "mask %s does not broadcast over q %s", mask, q)
	return g.wrap(cFlashAttn(g.ctx, q.h, k.h, v.h, mask.h, scale, 0))
}

// Attention is scaled-dot-product attention of any length: q [D, N, H, B]
// (f32), k [D, L, Hkv, B], v [Dv, L, Hkv, B] with H a multiple of Hkv. The
// result is f32 [Dv, H, N, B] (reshape it to [Dv*H, N, B] for the output
// projection). K and V are converted to o.KV (default: the backend's
// KVType) when they are not already in it.
//
// Queries are split into chunks of at most o.Chunk rows, each attending to
// the full K/V in one flash_attn_ext call. For causal attention, chunk c
// attends only to the keys it can see, and its f16 mask (chunk x visible
// keys) is built on the device from two small index vectors, so no S x S
// mask ever exists on the host. Chunks are joined by a balanced tree of
// concatenations.
func (g *Graph) Attention(q, k, v *Tensor, o AttentionOptions) *Tensor {
	const op = "Attention"
	g.own(op, q, k, v)
	g.need(op, q.ne[1] <= k.ne[1] || !o.Causal, "causal attention with more queries (%d) than keys (%d)", q.ne[1], k.ne[1])
	chunk := o.Chunk
	if chunk <= 0 {
		chunk = DefaultAttentionChunk
	}
	chunk = min(chunk, MaxAttentionRows)
	scale := o.Scale
	if scale == 0 {
		scale = float32(1 / math.Sqrt(float64(q.ne[0])))
	}
	name := o.Name
	if name == "" {
		name = "attn"
	}
	kv := o.KV.Or(g.b.KVType())
	g.need(op, slices.Contains(kvTypes, kv), "K/V cannot be kept as %s", kv)
	if k.dt != kv {
		k = g.Cast(k, kv)
	}
	if v.dt != kv {
		v = g.Cast(v, kv)
	}
	n, l := int(q.ne[1]), int(k.ne[1])
	var kcol, qrow *Tensor
	if o.Causal {
		kcol, qrow = g.causalIndex(name, n, l)
	}
	var parts []*Tensor
	for s := 0; s < n; s += chunk {
		rows := min(chunk, n-s)
		qc := q
		if rows != n {
			qc = g.View(q, s*int(q.nb[1]), []int{int(q.ne[0]), rows, int(q.ne[2]), int(q.ne[3])},
				[]int{int(q.nb[1]), int(q.nb[2]), int(q.nb[3])})
		}
		kc, vc := k, v
		var mask *Tensor
		if o.Causal {
			keys := min(l, s+rows+l-n) // keys this chunk can see
			if keys != l {
				kc = g.View(k, 0, []int{int(k.ne[0]), keys, int(k.ne[2]), int(k.ne[3])}, []int{int(k.nb[1]), int(k.nb[2]), int(k.nb[3])})
				vc = g.View(v, 0, []int{int(v.ne[0]), keys, int(v.ne[2]), int(v.ne[3])}, []int{int(v.nb[1]), int(v.nb[2]), int(v.nb[3])})
			}
			mask = g.causalMask(kcol, qrow, s, rows, keys).SetName("%s.mask.%d", name, s)
		}
		parts = append(parts, g.FlashAttn(qc, kc, vc, mask, scale).SetName("%s.out.%d", name, s))
	}
	for len(parts) > 1 { // balanced: each level copies the output once
		var next []*Tensor
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

// maskPad is the row padding of causal masks (ggml's historical
// GGML_KQ_MASK_PAD; Metal needs only >= N rows, padding keeps every mask
// shape a multiple of its 8x64 block pre-pass).
const maskPad = 64

// causalIndex declares and fills the two index inputs causal masks are
// built from: kcol[j] = -j for every key, qrow[i] = i + (L-N) + 1 for every
// (padded) query row.
func (g *Graph) causalIndex(name string, n, l int) (kcol, qrow *Tensor) {
	kcol = g.Input(name+".kcol", F32, l)
	qrow = g.Input(name+".qrow", F32, n+maskPad)
	kv := make([]float32, l)
	for j := range kv {
		kv[j] = -float32(j)
	}
	qv := make([]float32, n+maskPad)
	for i := range qv {
		qv[i] = float32(i + l - n + 1)
	}
	kcol.SetF32(kv)
	qrow.SetF32(qv)
	return kcol, qrow
}

// causalMask builds the f16 mask of query rows [s, s+rows) over the first
// keys keys: d = qrow[i] + kcol[j] = i + (L-N) + 1 - j is >= 1 exactly where
// key j is visible, so log(clamp(d, 0, 1)) is 0 there and -inf elsewhere.
// Every op here (REPEAT, ADD, CLAMP, LOG, CPY f32->f16) runs on Metal.
func (g *Graph) causalMask(kcol, qrow *Tensor, s, rows, keys int) *Tensor {
	pad := (rows + maskPad - 1) / maskPad * maskPad
	kc := g.View(kcol, 0, []int{keys, 1}, nil)
	qr := g.View(qrow, s*4, []int{1, pad}, []int{4})
	d := g.Add(g.wrap(cRepeat(g.ctx, kc.h, [4]int64{int64(keys), int64(pad), 1, 1})), qr)
	m := g.Log(g.clampInPlace(d, 0, 1)) // d is a temporary
	return g.Cast(m, F16)
}
