package lora

import (
	"fmt"
	"math"

	"h3studio/engine/weights"
)

// Update is one module's low-rank update, ΔW = Scale·B·A with A [Rank, In]
// and B [Out, Rank] (PyTorch order, row-major) in the base checkpoint's
// row order. The run-time scale is strength·Scale.
type Update struct {
	Module  string
	Kind    Kind
	Rank    int
	In, Out int
	// Scale is alpha/rank (of the first part of a fused split qkv; the
	// others' ratios are folded into their B blocks on Load).
	Scale float64

	parts      []part
	swapHalves bool
	// qkvFrom and qkvTo are the adapter's and the base's qkv row layouts
	// (set for KindQKV only); Load permutes B's rows when they differ.
	qkvFrom, qkvTo weights.QKVLayout
	heads, hd      int
	f              *File
}

// part is one stored pair of an update: a whole module, or one of q, k, v.
type part struct {
	a, b  *weights.TensorInfo
	which qkvPart
	rank  int
	ratio float64 // alpha/rank
}

// addPart checks one file pair against the module and adds it.
func (u *Update) addPart(p *rawPair, ref moduleRef, t Target, alpha alphaRule) *Misfit {
	bad := func(kind MisfitKind, format string, a ...any) *Misfit {
		return &Misfit{Kind: kind, Detail: fmt.Sprintf(format, a...), Keys: []string{pairName(p)}}
	}
	if p.a == nil || p.b == nil {
		return bad(NotLoRA, "%s has only one half of its pair", p.key)
	}
	for _, ti := range []*weights.TensorInfo{p.a, p.b} {
		switch ti.DType {
		case weights.F32, weights.F16, weights.BF16:
		default:
			return bad(NotLoRA, "%s is stored as %s (want F32, F16 or BF16)", ti.Name, ti.DType)
		}
	}
	out := u.Out
	if ref.part != partWhole {
		out = u.Out / 3
	}
	as, bs := p.a.Shape, p.b.Shape
	if len(as) != 2 || len(bs) != 2 || as[0] != bs[1] || as[0] < 1 {
		return bad(Shape, "%s: A %v and B %v are not [rank, in] and [out, rank]", p.key, as, bs)
	}
	if int(as[1]) != u.In || int(bs[0]) != out {
		return bad(Shape, "%s: update is %dx%d, the model's %s is %dx%d", p.key, bs[0], as[1], u.Module, out, u.In)
	}
	for _, q := range u.parts {
		if q.which == ref.part || q.which == partWhole || ref.part == partWhole {
			return bad(NotLoRA, "%s is given twice", u.Module)
		}
	}
	r := int(as[0])
	ratio := alpha.ratio(p.key, r)
	if p.alpha != nil {
		v, err := u.f.read(p.alpha)
		if err != nil || len(v) != 1 || !(v[0] > 0) || math.IsInf(float64(v[0]), 0) {
			return bad(NotLoRA, "%s is not one positive number", p.alpha.Name)
		}
		ratio = float64(v[0]) / float64(r)
	}
	u.parts = append(u.parts, part{a: p.a, b: p.b, which: ref.part, rank: r, ratio: ratio})
	u.swapHalves = ref.swapHalves
	u.Rank += r
	if len(u.parts) == 1 {
		u.Scale = ratio
	}
	if u.Kind == KindQKV {
		u.heads, u.hd, u.qkvTo = t.Heads, t.HeadDim, t.QKV
	}
	return nil
}

// split reports whether the update is fused from split q/k/v pairs.
func (u *Update) split() bool { return len(u.parts) > 0 && u.parts[0].which != partWhole }

// Load reads the update's factors as float32: A [Rank, In] and B
// [Out, Rank], row-major, in the base checkpoint's row order.
func (u *Update) Load() (a, b []float32, err error) {
	a = make([]float32, 0, u.Rank*u.In)
	b = make([]float32, u.Out*u.Rank)
	col := 0
	for _, p := range u.parts {
		pa, err := u.f.read(p.a)
		if err != nil {
			return nil, nil, err
		}
		pb, err := u.f.read(p.b)
		if err != nil {
			return nil, nil, err
		}
		a = append(a, pa...)
		rows, row0 := u.Out, 0
		if p.which != partWhole {
			rows = u.Out / 3
			row0 = int(p.which) * rows // flat order: [q | k | v]
		}
		k := float32(p.ratio / u.Scale) // 1 unless the parts' alpha/rank differ
		for i := 0; i < rows; i++ {
			dst := b[(row0+i)*u.Rank+col : (row0+i)*u.Rank+col+p.rank]
			for j, v := range pb[i*p.rank : (i+1)*p.rank] {
				dst[j] = v * k
			}
		}
		col += p.rank
	}
	if u.swapHalves {
		b = swapRowHalves(b, u.Out, u.Rank)
	}
	if u.Kind == KindQKV && u.qkvFrom != u.qkvTo {
		b = permuteQKV(b, u.Rank, u.heads, u.hd, u.qkvFrom, u.qkvTo)
	}
	return a, b, nil
}

// swapRowHalves exchanges the first and second halves of a [rows, w] matrix's rows.
func swapRowHalves(m []float32, rows, w int) []float32 {
	half := rows / 2 * w
	out := make([]float32, 0, len(m))
	return append(append(out, m[half:]...), m[:half]...)
}
