package ggml_test

import (
	"fmt"

	"h3studio/engine/ggml"
)

// A linear layer with bf16 weights kept in a WeightSet, run on the CPU.
func Example() {
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer b.Close()

	ws := b.NewWeightSet(2)
	defer ws.Free()
	w := ws.Add("proj.weight", ggml.BF16, 4, 2) // PyTorch [out=2, in=4]
	bias := ws.Add("proj.bias", ggml.F32, 2)
	if err := ws.Alloc(); err != nil {
		fmt.Println(err)
		return
	}
	w.SetF32([]float32{1, 0, 0, 0, 0, 1, 1, 1})
	bias.SetF32([]float32{0.5, -1})

	g := b.NewGraph(0)
	defer g.Free()
	x := g.Input("x", ggml.F32, 4, 3) // 3 tokens of 4
	y := g.Linear(x, w, bias).SetName("proj.out")
	g.Output(y)
	x.SetF32([]float32{1, 2, 3, 4, 0, 0, 0, 0, -1, -1, -1, -1})
	if err := g.Compute(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(y.Shape(), y.F32())
	// Output: [2 3] [1.5 8 0.5 -1 -0.5 -4]
}
