package backendtest

import "h3studio/engine/ggml"

// Set declares an input with the given float32 values (stored as dt) and
// returns it with the values ggml holds.
func (b *Builder) Set(name string, dt ggml.DType, v []float32, shape ...int) (*ggml.Tensor, []float64) {
	t := b.G.Input(name, dt, shape...)
	raw := ggml.Quantize(dt, v, t.Ne(0))
	t.SetRaw(raw)
	b.inputs = append(b.inputs, input{t, raw})
	b.G.Output(t)
	held := ggml.Dequantize(dt, raw, len(v))
	out := make([]float64, len(held))
	for i, x := range held {
		out[i] = float64(x)
	}
	return t, out
}

// Normal returns n normal(0,1) values scaled by amp.
func (b *Builder) Normal(n int, amp float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(amp * b.R.NormFloat64())
	}
	return v
}
