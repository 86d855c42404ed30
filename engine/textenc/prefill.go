package textenc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"h3studio/engine/ggml"
)

// rowState is a prefill's working set in device memory: every token row's
// hidden state and the current layer's rotated keys and values. Graphs read
// and write it through views, so a layer's row groups exchange nothing with
// the host. Kept on the host instead (as before), a 10,231-token prefill on
// the H200 spent 29 s of its 31 s moving rows across PCIe and converting
// them (the layers' GEMMs alone take 19 ms each).
type rowState struct {
	ws      *ggml.WeightSet
	x, k, v *ggml.Tensor // [D, S] f32; [hd, KVHeads, S] in the K/V type
	d       int          // hidden width
	kvRow   int          // bytes of one token's keys (or values)
}

// newRowState places the rows of x (row-major [S, D]) on the device with
// room for one layer's keys and values.
func (m *Model) newRowState(x []float32) (*rowState, error) {
	c := m.cfg.Text
	S := len(x) / c.Hidden
	ws := m.b.NewWeightSet(3)
	st := &rowState{ws: ws, d: c.Hidden, kvRow: c.KVHeads * c.HeadDim * m.kvType.RowBytes(1)}
	st.x = ws.Add("prefill.x", ggml.F32, c.Hidden, S)
	st.k = ws.Add("prefill.k", m.kvType, c.HeadDim, c.KVHeads, S)
	st.v = ws.Add("prefill.v", m.kvType, c.HeadDim, c.KVHeads, S)
	if err := ws.Alloc(); err != nil {
		return nil, fmt.Errorf("textenc: the rows of a %d-token prompt: %w", S, err)
	}
	st.x.SetF32(x)
	return st, nil
}

func (st *rowState) free() { st.ws.Free() }

// rows is a view of the hidden rows [s, e).
func (st *rowState) rows(g *ggml.Graph, s, e int) *ggml.Tensor {
	return g.View(st.x, s*st.d*4, []int{st.d, e - s}, nil)
}

// keyRows is a view of rows [s, e) of t (st.k or st.v).
func (st *rowState) keyRows(g *ggml.Graph, t *ggml.Tensor, s, e int) *ggml.Tensor {
	return g.View(t, s*st.kvRow, []int{t.Ne(0), t.Ne(1), e - s}, nil)
}

// positionInput declares and fills the mRoPE positions of rows [s, e).
func positionInput(g *ggml.Graph, pos positions, s, e int) *ggml.Tensor {
	pin := g.Input("pos", ggml.I32, 4*(e-s))
	pin.SetI32(pos.rows(s, e))
	return pin
}

// runText runs the language layers over x (row-major [S, hidden]) in place.
// After layer i < len(deepstack), deepstack[i] (one row per visual row, in
// order) is added at the visual rows.
func (m *Model) runText(ctx context.Context, x []float32, pos positions, visual []int, deepstack [][]float32) error {
	D := m.cfg.Text.Hidden
	for i := range deepstack {
		if len(deepstack[i]) != len(visual)*D {
			return errors.New("textenc: deepstack feature rows differ from the visual rows")
		}
	}
	st, err := m.newRowState(x)
	if err != nil {
		return err
	}
	defer st.free()
	pf := m.prefetcher()
	defer pf.stop()
	for li := 0; li < m.opts.Layers; li++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		t0 := time.Now()
		s, err := pf.get(li)
		if err != nil {
			return err
		}
		if err := m.keysValues(li, &s.l, st, pos); err != nil {
			return err
		}
		if err := m.queries(li, &s.l, st, pos); err != nil {
			return err
		}
		m.release(li)
		if m.opts.Tap != nil {
			st.x.F32Into(x)
			m.tap(fmt.Sprintf("layer%d_out", li), x)
		}
		if li < len(deepstack) {
			if err := m.addDeepstack(st, visual, deepstack[li]); err != nil {
				return err
			}
		}
		m.opts.Logger.Debug("textenc layer", "layer", li, "rows", len(x)/D, "ms", time.Since(t0).Milliseconds())
	}
	st.x.F32Into(x)
	return nil
}

// keysValues computes every row's rotated keys and values for layer li,
// RowGroup rows per graph, into st.k and st.v.
func (m *Model) keysValues(li int, l *TextLayer, st *rowState, pos positions) error {
	c := m.cfg.Text
	S, G := st.x.Ne(1), m.opts.RowGroup
	for s := 0; s < S; s += G {
		e := min(S, s+G)
		g := m.b.NewGraph(0)
		kt, vt := l.KeysValues(g, st.rows(g, s, e), positionInput(g, pos, s, e), c)
		g.Output(g.Cpy(kt, st.keyRows(g, st.k, s, e)), g.Cpy(vt, st.keyRows(g, st.v, s, e)))
		err := m.compute(fmt.Sprintf("layer %d keys/values rows %d-%d", li, s, e), g)
		g.Free()
		if err != nil {
			return err
		}
	}
	return nil
}

// queries runs layer li's attention and MLP for every row group, each group
// attending to the keys of all rows up to its last, and writes the layer
// output over the group's rows: later groups read only their own rows (and
// keys and values already computed), so writing in place is safe.
func (m *Model) queries(li int, l *TextLayer, st *rowState, pos positions) error {
	c := m.cfg.Text
	S, G := st.x.Ne(1), m.opts.RowGroup
	for s := 0; s < S; s += G {
		e := min(S, s+G)
		g := m.b.NewGraph(0)
		y := l.Forward(g, st.rows(g, s, e), positionInput(g, pos, s, e), st.keyRows(g, st.k, 0, e), st.keyRows(g, st.v, 0, e),
			c, m.opts.QueryChunk, m.opts.Precision.KV, fmt.Sprintf("blk.%d", li))
		g.Output(g.Cpy(y, st.rows(g, s, e)))
		err := m.compute(fmt.Sprintf("layer %d rows %d-%d", li, s, e), g)
		g.Free()
		if err != nil {
			return err
		}
	}
	return nil
}

// addDeepstack adds ds (one row per visual row, in order) to the visual
// rows of st, one view per run of consecutive rows (a picture's).
func (m *Model) addDeepstack(st *rowState, visual []int, ds []float32) error {
	D := st.d
	g := m.b.NewGraph(0)
	defer g.Free()
	var outs []*ggml.Tensor
	for j := 0; j < len(visual); {
		n := 1
		for j+n < len(visual) && visual[j+n] == visual[j]+n {
			n++
		}
		a := visual[j]
		in := g.Input(fmt.Sprintf("deepstack.%d", a), ggml.F32, D, n)
		in.SetF32(ds[j*D : (j+n)*D])
		outs = append(outs, g.Cpy(g.Add(st.rows(g, a, a+n), in), st.rows(g, a, a+n)))
		j += n
	}
	if len(outs) == 0 {
		return nil
	}
	g.Output(outs...)
	return m.compute("deepstack", g)
}

// prefetcher hands out the layers in order; streamed, it loads layer i+1
// in the background while layer i computes.
type prefetcher struct {
	m    *Model
	next chan loadedLayer // the load in flight, if any
}

type loadedLayer struct {
	s   *layerSlot
	err error
}

func (m *Model) prefetcher() *prefetcher { return &prefetcher{m: m} }

// get returns layer li (waiting for its prefetch) and starts loading the
// next one when layers stream.
func (p *prefetcher) get(li int) (*layerSlot, error) {
	m := p.m
	var s *layerSlot
	var err error
	if p.next != nil {
		r := <-p.next
		p.next = nil
		s, err = r.s, r.err
		if err == nil {
			m.layers[li] = s
		}
	} else {
		s, err = m.layer(li)
	}
	if err != nil {
		return nil, err
	}
	if m.streamed() && li+1 < m.opts.Layers && m.layers[li+1] == nil {
		p.next = make(chan loadedLayer, 1)
		go func(i int) {
			s, err := m.loadLayer(i)
			p.next <- loadedLayer{s, err}
		}(li + 1)
	}
	return s, nil
}

// stop waits for a prefetch still in flight and frees what it loaded.
func (p *prefetcher) stop() {
	if p.next != nil {
		if r := <-p.next; r.s != nil {
			r.s.ws.Free()
		}
		p.next = nil
	}
}
