package vae

import (
	"errors"
	"fmt"
	"math"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// loader collects the weights a model needs from a checkpoint: it checks
// every shape against what the config implies, converts to float32 on the
// host (folding weight norm, reordering conv3d kernels), and reports every
// missing or misshaped tensor in one error before anything is allocated.
type loader struct {
	src     weights.Source
	errs    []error
	pending []pendingWeight
	bytes   int
}

type pendingWeight struct {
	dst   **ggml.Tensor
	name  string
	data  []float32
	shape []int // ggml order
}

func newLoader(src weights.Source) *loader { return &loader{src: src} }

// read returns the checkpoint tensor name as float32, checking its shape
// (checkpoint order). A problem is recorded and nil returned.
func (l *loader) read(name string, shape ...int) []float32 {
	info, ok := l.src.Lookup(name)
	if !ok {
		l.errs = append(l.errs, fmt.Errorf("vae: missing tensor %s (want shape %v)", name, shape))
		return nil
	}
	if !sameShape(info.Shape, shape) {
		l.errs = append(l.errs, fmt.Errorf("vae: tensor %s: shape %v, want %v", name, info.Shape, shape))
		return nil
	}
	v, err := weights.Float32(l.src, name)
	if err != nil {
		l.errs = append(l.errs, fmt.Errorf("vae: tensor %s: %w", name, err))
		return nil
	}
	return v
}

func sameShape(a []int64, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != int64(b[i]) {
			return false
		}
	}
	return true
}

// put schedules data as a weight of ggml shape, stored into *dst by upload.
func (l *loader) put(dst **ggml.Tensor, name string, data []float32, shape ...int) {
	if data == nil {
		return
	}
	n := 1
	for _, s := range shape {
		n *= s
	}
	if n != len(data) {
		panic(fmt.Sprintf("vae: weight %s: %d values for ggml shape %v", name, len(data), shape))
	}
	l.pending = append(l.pending, pendingWeight{dst, name, data, shape})
	l.bytes += 4 * n
}

// tensor reads name (checkpoint shape ckpt) and schedules it with ggml shape.
func (l *loader) tensor(dst **ggml.Tensor, name string, ckpt []int, shape ...int) {
	l.put(dst, name, l.read(name, ckpt...), shape...)
}

// linear loads name.weight [out, in] as ggml [in, out] and name.bias [out].
func (l *loader) linear(w, b **ggml.Tensor, name string, in, out int) {
	l.tensor(w, name+".weight", []int{out, in}, in, out)
	if b != nil {
		l.tensor(b, name+".bias", []int{out}, out)
	}
}

// weightNorm reads name.weight_g [outer, 1, 1] and name.weight_v [outer,
// inner, k] and returns g·v/‖v‖ (norm over each outer slice), PyTorch's
// weight_norm with dim 0.
func (l *loader) weightNorm(name string, outer, inner, k int) []float32 {
	g := l.read(name+".weight_g", outer, 1, 1)
	v := l.read(name+".weight_v", outer, inner, k)
	if g == nil || v == nil {
		return nil
	}
	out := make([]float32, len(v))
	n := inner * k
	for o := range outer {
		var ss float64
		for _, x := range v[o*n : (o+1)*n] {
			ss += float64(x) * float64(x)
		}
		s := float64(g[o]) / math.Sqrt(ss)
		for i := o * n; i < (o+1)*n; i++ {
			out[i] = float32(float64(v[i]) * s)
		}
	}
	return out
}

func (l *loader) err() error { return errors.Join(l.errs...) }

// upload allocates every scheduled weight in one WeightSet of b.
func (l *loader) upload(b *ggml.Backend) (*ggml.WeightSet, error) {
	if err := l.err(); err != nil {
		return nil, err
	}
	ws := b.NewWeightSet(len(l.pending))
	for _, p := range l.pending {
		*p.dst = ws.Add(p.name, ggml.F32, p.shape...)
	}
	if err := ws.Alloc(); err != nil {
		ws.Free()
		return nil, fmt.Errorf("vae: %w", err)
	}
	for _, p := range l.pending {
		(*p.dst).SetF32(p.data)
	}
	l.pending = nil
	return ws, nil
}
