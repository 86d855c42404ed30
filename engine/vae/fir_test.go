package vae

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"h3studio/engine/ggml"
)

// The block-Toeplitz resampling against the reference's definition, at
// row lengths around the block size: the last block of a row, a row
// shorter than one block and rows that fill their blocks exactly are
// where the padding and block bookkeeping can go wrong, and the parity
// fixtures' lengths do not reach them all.
func TestAntiAliasedSnakeLengths(t *testing.T) {
	const c = 3
	r := rand.New(rand.NewPCG(7, 1))
	m := snakeWeights(r, c)
	act := aaSnake{c: c}
	b := cpuBackend(t)
	ws, err := loadNet(b, m, &act, ggml.F32)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Free()
	for _, n := range []int{1, 2, 5, firBlock - 1, firBlock, firBlock + 1, 3*firBlock + 7} {
		g := b.NewGraph(0)
		x := make([]float32, n*c*stereo)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		in := g.Input("x", ggml.F32, n, c, stereo)
		in.SetF32(x)
		y := act.forward(g, in)
		g.Output(y)
		(&auditor{t: t}).inspect(g)
		if err := g.Compute(); err != nil {
			t.Fatal(err)
		}
		got := y.F32()
		var num, den float64
		for row := range c * stereo {
			want := refAntiAliasedSnake(x[row*n:][:n], m, row%c)
			for i, w := range want {
				d := float64(got[row*n+i]) - w
				num, den = num+d*d, den+w*w
			}
		}
		if rel := math.Sqrt(num / den); rel > 1e-5 {
			t.Errorf("%d samples a row: rel L2 %.3g against the reference's resampling", n, rel)
		}
		g.Free()
	}
}

// snakeWeights are random weights of one anti-aliased activation over c
// channels, under the checkpoint's names.
func snakeWeights(r *rand.Rand, c int64) *memSource {
	m := newMemSource()
	m.add(r, "act.alpha", 0.3, 0, c)
	m.add(r, "act.beta", 0.3, 0, c)
	m.add(r, "upsample.filter", 0.1, 0.08, 1, 1, audioFilterTaps)
	m.add(r, "downsample.lowpass.filter", 0.1, 0.08, 1, 1, audioFilterTaps)
	return m
}

// refAntiAliasedSnake is Activation1d(SnakeBeta) on one row in float64,
// as the reference defines it: UpSample1d (replicate-pad 5, transposed
// convolution with 2·filter at stride 2, crop 15 a side), SnakeBeta,
// LowPassFilter1d (replicate-pad 5 and 6, correlation at stride 2).
func refAntiAliasedSnake(x []float32, m *memSource, ch int) []float64 {
	up, down := m.get("upsample.filter"), m.get("downsample.lowpass.filter")
	k := len(up)
	at := func(v []float64, i int) float64 { return v[min(max(i, 0), len(v)-1)] }
	xs := make([]float64, len(x))
	for i, v := range x {
		xs[i] = float64(v)
	}
	const pad, crop = 5, 15
	full := make([]float64, 2*(len(xs)+2*pad)+k-2)
	for i := range len(xs) + 2*pad {
		v := at(xs, i-pad)
		for j := range k {
			full[2*i+j] += 2 * float64(up[j]) * v
		}
	}
	s := full[crop : len(full)-crop]
	alpha := math.Exp(float64(m.get("act.alpha")[ch]))
	beta := math.Exp(float64(m.get("act.beta")[ch]))
	for i, v := range s {
		sn := math.Sin(v * alpha)
		s[i] = v + sn*sn/(beta+audioSnakeEps)
	}
	out := make([]float64, len(xs))
	for i := range out {
		for j := range k {
			out[i] += float64(down[j]) * at(s, 2*i+j-(k/2-1))
		}
	}
	return out
}

// BenchmarkAntiAliasedSnake times the activation at the demo model's last
// decoder stage (2.3 s of stereo, 8 channels) as block-Toeplitz products
// and, as the reference in the same run, as the 1-D convolutions it
// replaced (IM2COL and a one- or two-row MUL_MAT per filter), and reports
// the ratio.
func BenchmarkAntiAliasedSnake(b *testing.B) {
	const n, c = 75200, 8
	r := rand.New(rand.NewPCG(7, 2))
	m := snakeWeights(r, c)
	be, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU})
	if err != nil {
		b.Skip(err)
	}
	defer be.Close()
	act := aaSnake{c: c}
	ws, err := loadNet(be, m, &act, ggml.F32)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.Free()
	poly, err := polyphase(m, "upsample.filter", []int64{1, 1, audioFilterTaps})
	if err != nil {
		b.Fatal(err)
	}
	kw := be.NewWeightSet(2)
	upK, downK := kw.Add("up", ggml.F32, upTaps, 1, 2), kw.Add("down", ggml.F32, audioFilterTaps, 1, 1)
	if err := kw.Alloc(); err != nil {
		b.Fatal(err)
	}
	defer kw.Free()
	upK.SetF32(poly)
	downK.SetF32(m.get("downsample.lowpass.filter"))
	x := make([]float32, n*c*stereo)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	run := func(f func(g *ggml.Graph, in *ggml.Tensor) *ggml.Tensor) time.Duration {
		best := time.Duration(math.MaxInt64)
		for range 3 {
			g := be.NewGraph(0)
			in := g.Input("x", ggml.F32, n, c, stereo)
			in.SetF32(x)
			g.Output(f(g, in))
			t0 := time.Now()
			if err := g.Compute(); err != nil {
				b.Fatal(err)
			}
			best = min(best, time.Since(t0))
			g.Free()
		}
		return best
	}
	conv := func(g *ggml.Graph, in *ggml.Tensor) *ggml.Tensor {
		z := g.Cont(replicateRows(g, in, upPad, upPad))
		up := g.Conv1D(g.Reshape(z, n+2*upPad, 1, c*stereo), upK, 1, 0, 1)
		up = g.Reshape(g.Cont(g.Permute(up, 1, 0, 2, 3)), 2*n, c, stereo)
		s := g.Snake(up, act.Alpha, act.InvBeta)
		u := g.Cont(replicateRows(g, s, downPadLeft, downPadRite))
		return g.Conv1D(g.Reshape(u, 2*n+downPadLeft+downPadRite, 1, c*stereo), downK, audioResampling, 0, 1)
	}
	for b.Loop() {
		blocks, convs := run(act.forward), run(conv)
		b.ReportMetric(blocks.Seconds(), "blocks-s")
		b.ReportMetric(convs.Seconds(), "im2col-s")
		b.ReportMetric(convs.Seconds()/blocks.Seconds(), "speedup")
	}
}

// replicateRows pads rows of x [L, C, B] with exactly left and right
// copies of their edges, as the convolutions want: blockRows with blocks
// of one sample, so its tail is the right copies alone.
func replicateRows(g *ggml.Graph, x *ggml.Tensor, left, right int) *ggml.Tensor {
	return blockRows(g, x, left, right, 1, left+x.Ne(0)+right-1)
}
