package ggml

import (
	"math"
	"math/rand/v2"
	"testing"
)

func newCPU(t testing.TB) *Backend {
	t.Helper()
	b, err := NewBackend(BackendOptions{Device: DeviceCPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestMulMatAdd checks the basic path (inputs, compute, outputs) against a
// float64 reference.
func TestMulMatAdd(t *testing.T) {
	b := newCPU(t)
	g := b.NewGraph(0)
	defer g.Free()
	const k, m, n = 64, 24, 10
	r := rand.New(rand.NewPCG(1, 2))
	w, x, bias := randv(r, k*m), randv(r, k*n), randv(r, m)
	tw := g.Input("w", F32, k, m)
	tx := g.Input("x", F32, k, n)
	tb := g.Input("b", F32, m)
	y := g.Add(g.MulMat(tw, tx), tb).SetName("y")
	g.Output(y)
	tw.SetF32(w)
	tx.SetF32(x)
	tb.SetF32(bias)
	if err := g.Compute(); err != nil {
		t.Fatal(err)
	}
	got := y.F32()
	if s := y.Shape(); len(s) != 2 || s[0] != m || s[1] != n {
		t.Fatalf("shape %v, want [%d %d]", s, m, n)
	}
	var maxErr float64
	for j := range n {
		for i := range m {
			want := float64(bias[i])
			for l := range k {
				want += float64(w[i*k+l]) * float64(x[j*k+l])
			}
			maxErr = max(maxErr, math.Abs(want-float64(got[j*m+i])))
		}
	}
	t.Logf("max abs err %.3g", maxErr)
	if maxErr > 1e-4 {
		t.Fatalf("max abs err %g", maxErr)
	}
}

func randv(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// refAttention is float64 attention over [D, N, H] q and [D, L, Hkv] k/v;
// the result is [Dv, H, N] like ggml's.
func refAttention(q, k, v []float32, d, dv, n, l, h, hkv int, causal bool) []float64 {
	out := make([]float64, dv*h*n)
	scale := 1 / math.Sqrt(float64(d))
	sc := make([]float64, l)
	for hh := range h {
		kh := hh / (h / hkv)
		for i := range n {
			m := math.Inf(-1)
			for j := range l {
				if causal && j > i+l-n {
					sc[j] = math.Inf(-1)
					continue
				}
				s := 0.0
				for x := range d {
					s += float64(q[(hh*n+i)*d+x]) * float64(k[(kh*l+j)*d+x])
				}
				sc[j] = s * scale
				m = max(m, sc[j])
			}
			sum := 0.0
			for j := range l {
				sc[j] = math.Exp(sc[j] - m)
				sum += sc[j]
			}
			for x := range dv {
				acc := 0.0
				for j := range l {
					acc += sc[j] * float64(v[(kh*l+j)*dv+x])
				}
				out[(i*h+hh)*dv+x] = acc / sum
			}
		}
	}
	return out
}

func TestAttentionChunkedCausal(t *testing.T) {
	b := newCPU(t)
	for _, causal := range []bool{false, true} {
		g := b.NewGraph(0)
		const d, n, l, h, hkv = 64, 200, 230, 4, 2
		r := rand.New(rand.NewPCG(3, 4))
		qv, kv, vv := randv(r, d*n*h), randv(r, d*l*hkv), randv(r, d*l*hkv)
		q := g.Input("q", F32, d, n, h)
		k := g.Input("k", F32, d, l, hkv)
		v := g.Input("v", F32, d, l, hkv)
		y := g.Attention(q, k, v, AttentionOptions{Causal: causal, Chunk: 64})
		g.Output(y)
		q.SetF32(qv)
		k.SetF32(kv)
		v.SetF32(vv)
		if err := g.Compute(); err != nil {
			t.Fatal(err)
		}
		got := y.F32()
		want := refAttention(qv, kv, vv, d, d, n, l, h, hkv, causal)
		var e, ref float64
		for i := range want {
			e = max(e, math.Abs(want[i]-float64(got[i])))
			ref = max(ref, math.Abs(want[i]))
		}
		t.Logf("causal=%v max abs err %.3g of %.3g", causal, e, ref)
		if e > 1.5e-2*ref { // bf16 K/V on the CPU: ~2^-8 relative per element
			t.Errorf("causal=%v: error %g", causal, e)
		}
		g.Free()
	}
}
