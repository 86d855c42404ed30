package tap_test

import (
	"fmt"
	"slices"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/engine/ggml/ggmltest"
	"h3studio/engine/tap"
)

// A marked view arrives after Compute as its own values, shape outermost
// first, in marking order; without a Func nothing is added to the graph.
func TestGraphMarkDeliver(t *testing.T) {
	b := ggmltest.Backend(t, ggmltest.Options{Threads: 1})
	build := func(fn tap.Func) (*ggml.Graph, *tap.Graph, int) {
		g := b.NewGraph(0)
		x := g.Input("x", ggml.F32, 3, 2, 2) // [ne0 3, ne1 2, ne2 2]
		x.SetF32([]float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
		y := g.Scale(x, 2)
		g.Output(y)
		before := len(g.Ops())
		tg := tap.On(g, fn)
		tg.Mark("whole", y)
		// the second matrix's first row: a strided view of y
		tg.Mark("row", g.View(y, 6*4, []int{3, 1}, []int{3 * 4}))
		return g, tg, len(g.Ops()) - before
	}

	g, tg, added := build(nil)
	if added != 0 {
		t.Errorf("a nil Func added %d nodes", added)
	}
	tg.Deliver() // must not call anything
	g.Free()

	var got []string
	g, tg, _ = build(func(name string, shape []int, data []float32) {
		got = append(got, fmt.Sprint(name, shape, data))
	})
	defer g.Free()
	if err := g.Compute(); err != nil {
		t.Fatal(err)
	}
	tg.Deliver()
	tg.Deliver() // delivered taps are forgotten
	want := []string{
		"whole[1 2 2 3] [0 2 4 6 8 10 12 14 16 18 20 22]",
		"row[1 1 1 3] [12 14 16]",
	}
	if !slices.Equal(got, want) {
		t.Errorf("delivered\n%q\nwant\n%q", got, want)
	}
}

// Host hands values through with the shape given, and is a no-op on nil.
func TestHost(t *testing.T) {
	var nilFn tap.Func
	nilFn.Host("x", []float32{1}) // must not panic
	var got string
	tap.Func(func(name string, shape []int, data []float32) {
		got = fmt.Sprint(name, shape, data)
	}).Host("hidden", []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	if got != "hidden[2 3] [1 2 3 4 5 6]" {
		t.Errorf("got %q", got)
	}
}
