package dit

import (
	"errors"
	"fmt"
	"math"

	"h3studio/engine/ggml"
	"h3studio/engine/lora"
)

// LoRA is one adapter applied at a strength (the run-time scale of each of
// its updates is Strength·alpha/rank).
type LoRA struct {
	Adapter  *lora.Adapter
	Strength float64
}

// sideTerm is one adapter's update of one linear: y += s·B·(A·x), with A
// [in, rank] and B [rank, out] resident in the adapter's weight set.
type sideTerm struct {
	a, b *ggml.Tensor
	s    float32
}

// sidePath is every adapter's term for one linear (nil: the base alone).
type sidePath []sideTerm

// add returns y + Σ s·B·(A·x) for x [in, rows], y [out, rows]. The scale
// is applied to the rank-wide A·x, the smallest tensor of the product.
func (p sidePath) add(g *ggml.Graph, y, x *ggml.Tensor) *ggml.Tensor {
	for _, t := range p {
		y = g.Add(y, g.MulMat(t.b, g.Scale(g.MulMat(t.a, x), t.s)))
	}
	return y
}

// addHalves is add for fc1, whose output the MLP reads as two halves: each
// half of B's rows updates its half, sharing A·x.
func (p sidePath) addHalves(g *ggml.Graph, gate, value, x *ggml.Tensor) (*ggml.Tensor, *ggml.Tensor) {
	ffn := gate.Ne(0)
	for _, t := range p {
		ax := g.Scale(g.MulMat(t.a, x), t.s)
		half := []int{t.b.Ne(0), ffn}
		gate = g.Add(gate, g.MulMat(g.View(t.b, 0, half, nil), ax))
		value = g.Add(value, g.MulMat(g.View(t.b, ffn*t.b.Nb(1), half, nil), ax))
	}
	return gate, value
}

// coreSide is the side paths of one Core's four linears (nil: none).
type coreSide struct {
	qkv, out, fc1, fc2 sidePath
}

// resident is one adapter's factors on the backend: every update but the
// AdaLN ones, which are folded into the tables where they are built.
type resident struct {
	ws   *ggml.WeightSet
	a, b map[string]*ggml.Tensor // by module name
}

// loraState is the adapters a model applies.
type loraState struct {
	list  []LoRA
	res   map[*lora.Adapter]*resident
	sides map[string]*coreSide // by Core prefix ("blocks.3.", "token_refiner.blocks.0.")
}

// SetLoRAs sets the adapters later forwards apply (nil: none) and their
// strengths. An adapter's factors are uploaded the first time it is set
// with a non-zero strength and kept while it stays in the list (at any
// strength), so changing strengths reloads nothing. A strength of 0 skips
// the adapter entirely (the forward is bit-identical to none). The AdaLN updates
// change the modulation tables: call PrepareAdaLN after SetLoRAs; until
// then Forward refuses to run.
func (m *Model) SetLoRAs(list []LoRA) error {
	st := &m.lora
	if st.res == nil {
		st.res = map[*lora.Adapter]*resident{}
	}
	keep := map[*lora.Adapter]bool{}
	for _, l := range list {
		if l.Adapter == nil || math.IsNaN(l.Strength) || math.IsInf(l.Strength, 0) {
			return errors.New("dit: a LoRA needs an adapter and a finite strength")
		}
		keep[l.Adapter] = true
		if l.Strength == 0 || st.res[l.Adapter] != nil {
			continue
		}
		r, err := m.upload(l.Adapter)
		if err != nil {
			return err
		}
		st.res[l.Adapter] = r
	}
	for ad, r := range st.res {
		if !keep[ad] {
			r.ws.Free()
			delete(st.res, ad)
		}
	}
	st.list = append([]LoRA(nil), list...)
	st.sides = m.buildSides()
	m.dropTables()
	return nil
}

// dropTables forgets the AdaLN tables (they were made for other adapters).
func (m *Model) dropTables() {
	if m.ada != nil {
		m.ada.ws.Free()
		m.ada = nil
	}
}

// LoRAFactorType is the storage of a resident LoRA factor whose rows are k
// long (A: the linear's input width; B: the rank), at a precision: f32
// when the weights are widened to f32 (the parity runs); q8_0 beside q8_0
// weights where k is whole q8_0 blocks, so the side path multiplies at the
// base's rate (on two cores f16 factors cost a q8_0 block 1.02-1.05x its
// forward, q8_0 factors 1.015-1.032x; their rounding is the base's own);
// else f16, which every backend multiplies.
func LoRAFactorType(p ggml.Precision, k int) ggml.DType {
	wt, ok := p.Weights.Get()
	switch {
	case ok && wt == ggml.F32:
		return ggml.F32
	case ok && wt == ggml.Q8_0 && k%ggml.Q8_0.BlockSize() == 0:
		return ggml.Q8_0
	}
	return ggml.F16
}

// LoRABytes is what an adapter's side-path factors take resident at a
// precision (the planner's count; AdaLN updates fold into the tables).
func LoRABytes(a *lora.Adapter, p ggml.Precision) int64 {
	var n int64
	for _, u := range a.Updates {
		if u.Kind == lora.KindAdaLN {
			continue
		}
		n += int64(u.Rank) * int64(LoRAFactorType(p, u.In).RowBytes(u.In))
		n += int64(u.Out) * int64(LoRAFactorType(p, u.Rank).RowBytes(u.Rank))
	}
	return n
}

// upload places an adapter's non-AdaLN factors on the backend.
func (m *Model) upload(ad *lora.Adapter) (*resident, error) {
	var ups []*lora.Update
	for _, u := range ad.Updates {
		if u.Kind != lora.KindAdaLN {
			ups = append(ups, u)
		}
	}
	r := &resident{ws: m.b.NewWeightSet(2*len(ups) + 1), a: map[string]*ggml.Tensor{}, b: map[string]*ggml.Tensor{}}
	p := m.opt.Precision
	for _, u := range ups {
		r.a[u.Module] = r.ws.Add("lora."+u.Module+".A", LoRAFactorType(p, u.In), u.In, u.Rank)
		r.b[u.Module] = r.ws.Add("lora."+u.Module+".B", LoRAFactorType(p, u.Rank), u.Rank, u.Out)
	}
	if err := r.ws.Alloc(); err != nil {
		r.ws.Free()
		return nil, fmt.Errorf("dit: LoRA %s: %w", ad.Path, err)
	}
	for _, u := range ups {
		a, b, err := u.Load()
		if err != nil {
			r.ws.Free()
			return nil, fmt.Errorf("dit: %w", err)
		}
		r.a[u.Module].SetF32(a)
		r.b[u.Module].SetF32(b)
	}
	return r, nil
}

// buildSides groups the resident terms by Core and linear.
func (m *Model) buildSides() map[string]*coreSide {
	sides := map[string]*coreSide{}
	for _, l := range m.lora.list {
		r := m.lora.res[l.Adapter]
		if l.Strength == 0 || r == nil {
			continue
		}
		for _, u := range l.Adapter.Updates {
			if u.Kind == lora.KindAdaLN {
				continue
			}
			prefix := u.Module[:len(u.Module)-len(u.Kind)]
			cs := sides[prefix]
			if cs == nil {
				cs = &coreSide{}
				sides[prefix] = cs
			}
			t := sideTerm{a: r.a[u.Module], b: r.b[u.Module], s: float32(l.Strength * u.Scale)}
			switch u.Kind {
			case lora.KindQKV:
				cs.qkv = append(cs.qkv, t)
			case lora.KindOut:
				cs.out = append(cs.out, t)
			case lora.KindFC1:
				cs.fc1 = append(cs.fc1, t)
			case lora.KindFC2:
				cs.fc2 = append(cs.fc2, t)
			}
		}
	}
	return sides
}

// side is the side paths of the Core under prefix (zero: none).
func (m *Model) side(prefix string) coreSide {
	if cs := m.lora.sides[prefix]; cs != nil {
		return *cs
	}
	return coreSide{}
}

// closeLoRAs frees every adapter's factors.
func (m *Model) closeLoRAs() {
	for ad, r := range m.lora.res {
		r.ws.Free()
		delete(m.lora.res, ad)
	}
	m.lora.sides = nil
}

// adaUpdate adds every adapter's update of the AdaLN linear under prefix
// to y [out, nt] = adaln_proj(x), in f32 in the graph that builds the
// tables: y += s·B·(A·x), the factors read from the file for this graph
// only (they are never resident).
func (m *Model) adaUpdate(g *ggml.Graph, prefix string, x, y *ggml.Tensor) (*ggml.Tensor, error) {
	name := prefix + string(lora.KindAdaLN)
	for k, l := range m.lora.list {
		if l.Strength == 0 {
			continue
		}
		for _, u := range l.Adapter.Updates {
			if u.Module != name {
				continue
			}
			a, b, err := u.Load()
			if err != nil {
				return nil, fmt.Errorf("dit: %w", err)
			}
			ta := g.Input(fmt.Sprintf("%s.lora%d_A", name, k), ggml.F32, u.In, u.Rank)
			ta.SetF32(a)
			tb := g.Input(fmt.Sprintf("%s.lora%d_B", name, k), ggml.F32, u.Rank, u.Out)
			tb.SetF32(b)
			y = g.Add(y, g.MulMat(tb, g.Scale(g.MulMat(ta, x), float32(l.Strength*u.Scale))))
		}
	}
	return y, nil
}
