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
	matmul  ggml.DType // storage of linear weights (zero value: F32)
}

type pendingWeight struct {
	dst   **ggml.Tensor
	name  string
	data  []float32
	dt    ggml.DType
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

// put schedules data as an f32 weight of ggml shape, stored into *dst by upload.
func (l *loader) put(dst **ggml.Tensor, name string, data []float32, shape ...int) {
	l.putAs(dst, name, data, ggml.F32, shape...)
}

// putAs is put with the stored dtype (f16 halves a matmul weight's memory).
func (l *loader) putAs(dst **ggml.Tensor, name string, data []float32, dt ggml.DType, shape ...int) {
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
	l.pending = append(l.pending, pendingWeight{dst, name, data, dt, shape})
}

// tensor reads name (checkpoint shape ckpt) and schedules it with ggml shape.
func (l *loader) tensor(dst **ggml.Tensor, name string, ckpt []int, shape ...int) {
	l.put(dst, name, l.read(name, ckpt...), shape...)
}

// linear loads name.weight [out, in] as ggml [in, out] (stored as l.matmul,
// f32 unless set) and name.bias [out].
func (l *loader) linear(w, b **ggml.Tensor, name string, in, out int) {
	l.putAs(w, name+".weight", l.read(name+".weight", out, in), l.matmul, in, out)
	if b != nil {
		l.tensor(b, name+".bias", []int{out}, out)
	}
}

// weightNorm reads name.weight_g [outer, 1, 1] and name.weight_v [outer,
// inner, k] and returns g·v/‖v‖ (norm over each outer slice), PyTorch's
// weight_norm with dim 0.
//
// Checkpoints converted for ComfyUI (the Comfy-Org repack) store the folded
// weight as name.weight instead; that is read as is.
func (l *loader) weightNorm(name string, outer, inner, k int) []float32 {
	if _, folded := l.src.Lookup(name + ".weight"); folded {
		if _, wn := l.src.Lookup(name + ".weight_g"); !wn {
			return l.read(name+".weight", outer, inner, k)
		}
	}
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
		*p.dst = ws.Add(p.name, p.dt, p.shape...)
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
