// Package tap is the one hook through which the models (dit, textenc, vae)
// hand named intermediates to parity tests, as llama.cpp's cb does: a tap
// point costs nothing unless a Func is installed, and tap names equal the
// parity fixtures' tensor names.
package tap

import "h3studio/engine/ggml"

// Func receives one named intermediate: its values as f32 in row-major
// order and its shape, outermost axis first (a ggml tensor [ne0, ne1, ne2,
// ne3] arrives as [ne3, ne2, ne1, ne0]). The caller may reuse data once
// the call returns: copy what you keep.
type Func func(name string, shape []int, data []float32)

// Host hands host values to f (nothing when f is nil).
func (f Func) Host(name string, data []float32, shape ...int) {
	if f != nil {
		f(name, shape, data)
	}
}

// Graph collects the tap points of one graph: Mark makes a tensor an
// output of the graph, Deliver hands every marked tensor to the Func once
// the graph has run. With a nil Func both do nothing, so forwards mark
// unconditionally.
type Graph struct {
	fn     Func
	g      *ggml.Graph
	marked []mark
}

type mark struct {
	name string
	t    *ggml.Tensor
}

// On starts collecting g's tap points for fn (which may be nil).
func On(g *ggml.Graph, fn Func) *Graph { return &Graph{fn: fn, g: g} }

// Mark taps t under name. It taps a contiguous copy: a view's parent
// buffer may be reused once the graph moves past it.
func (tg *Graph) Mark(name string, t *ggml.Tensor) {
	if tg == nil || tg.fn == nil {
		return
	}
	t = tg.g.Cont(t)
	tg.g.Output(t)
	tg.marked = append(tg.marked, mark{name, t})
}

// Deliver hands the marked tensors to the Func after the graph computed,
// in marking order, and forgets them.
func (tg *Graph) Deliver() {
	if tg == nil {
		return
	}
	for _, m := range tg.marked {
		tg.fn(m.name, []int{m.t.Ne(3), m.t.Ne(2), m.t.Ne(1), m.t.Ne(0)}, m.t.F32())
	}
	tg.marked = nil
}
