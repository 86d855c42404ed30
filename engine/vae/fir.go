package vae

import (
	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// The anti-aliased activations' resampling filters run as block-Toeplitz
// matrix products. As 1-D convolutions of one input channel (an IM2COL
// copying each sample once per tap, then a product with one or two
// output rows) they took four fifths of the demo model's audio decode on
// the CPU, at about 1 GFLOP/s: ggml's matmul has nothing to block on with
// so few rows. Here a signal is cut into blocks of firBlock inputs, and
// the outputs of block b are T0·block(b) + T1·block(b+1), where T0 and T1
// hold the filter's taps along shifted diagonals. That is more
// multiply-adds than the taps need (the zeros of T0 and T1), but products
// of firBlock·2 rows run at matmul speed, with no IM2COL. The sums are
// the same terms in another order, so results agree to float rounding.

// firBlock is the block length, in the filters' input samples for the
// upsampler and output samples for the downsampler. It must exceed the
// filters' reach past a block (6 and 10 samples); 16 keeps the matrices'
// inner sizes (16 and 32) multiples of the CPU kernels' 8 lanes.
const firBlock = 16

// upBlocks turns UpSample1d's 12-tap filter (want [1, 1, 12]) into T0 and
// T1 of the upsampler, ggml [firBlock, 2·firBlock, 2]: column 2c+p of
// block b's product is output phase p of input c, the 7-tap phase kernel
// (polyphase) over the padded input from c on.
func upBlocks(src weights.Source, name string, want []int64) ([]float32, error) {
	poly, err := polyphase(src, name, want)
	if err != nil {
		return nil, err
	}
	const b = firBlock
	out := make([]float32, 2*2*b*b)
	for c := range b {
		for p := range audioResampling {
			for j := range upTaps {
				r := c + j // input sample of the tap, from block b's start
				out[((r/b)*2*b+2*c+p)*b+r%b] = poly[p*upTaps+j]
			}
		}
	}
	return out, nil
}

// polyphase turns UpSample1d's 12-tap filter (want [1, 1, 12]) into the
// two 7-tap phase kernels of the upsampler (upBlocks lays them out): UpSample1d is
// ratio·conv_transpose(pad(x, 5), f, stride 2)[15:-15]. Output 2q takes
// x_p[q+2+j]·f[11-2j], output 2q+1 takes x_p[q+3+j]·f[10-2j] (j < 6);
// with z = x padded by 3 (z[m] = x_p[m+2]) both phases are one 7-tap
// correlation over z, with kernels [2f11, 2f9, .., 2f1, 0] and
// [0, 2f10, .., 2f0].
func polyphase(src weights.Source, name string, want []int64) ([]float32, error) {
	up, err := weights.ReadFloat32(src, name, want)
	if err != nil {
		return nil, err
	}
	poly := make([]float32, 2*upTaps)
	for k := range upTaps {
		if k <= 5 {
			poly[k] = audioResampling * up[11-2*k]
		}
		if k >= 1 {
			poly[upTaps+k] = audioResampling * up[12-2*k]
		}
	}
	return poly, nil
}

// downBlocks turns LowPassFilter1d's 12-tap filter (want [1, 1, 12]) into
// T0 and T1 of the stride-2 downsampler, ggml [2·firBlock, firBlock, 2]:
// output c of a block correlates the filter with inputs 2c onwards.
func downBlocks(src weights.Source, name string, want []int64) ([]float32, error) {
	f, err := weights.ReadFloat32(src, name, want)
	if err != nil {
		return nil, err
	}
	const b, in = firBlock, 2 * firBlock
	out := make([]float32, 2*in*b)
	for c := range b {
		for j, tap := range f {
			r := audioResampling*c + j
			out[((r/in)*b+c)*in+r%in] = tap
		}
	}
	return out, nil
}

// blockRows pads each row of x [L, C, B] for blockFIR: left copies of
// its first sample, right copies of its last, then zeros up to nb+1
// blocks of in samples: [(nb+1)·in, C, B]. x may be a view of rows.
func blockRows(g *ggml.Graph, x *ggml.Tensor, left, right, in, nb int) *ggml.Tensor {
	n, c, b := x.Ne(0), x.Ne(1), x.Ne(2)
	col := func(i int) *ggml.Tensor {
		return g.View(x, i*x.Nb(0), []int{1, c, b}, []int{x.Nb(1), x.Nb(2)})
	}
	tail := (nb+1)*in - left - n // right's copies, then zeros
	if tail < right {
		panic("vae: blockRows: the blocks do not hold the row and its padding")
	}
	mask := make([]float32, tail)
	for i := range right {
		mask[i] = 1
	}
	m := g.Input("", ggml.F32, tail, 1, 1)
	m.SetF32(mask)
	first, last := col(0), col(n-1)
	x = g.Concat(g.Add(g.Zeros(ggml.F32, left, c, b), first), x, 0)
	return g.Concat(x, g.Mul(g.Add(g.Zeros(ggml.F32, tail, c, b), last), m), 0)
}

// blockFIR filters the rows of x [(nb+1)·in, C, B] (blockRows' output)
// with the block matrices t (ggml [in, out, 2]: in inputs make out outputs
// a block) and returns the products [out, (nb+1)·C·B - 1]: column
// r·(nb+1)+k is block k of row r (the last row's last block, which would
// read past the end, is left out: it is padding's, as every row's is).
func blockFIR(g *ggml.Graph, t, x *ggml.Tensor) *ggml.Tensor {
	in, out := t.Ne(0), t.Ne(1)
	n := x.Ne(0)*x.Ne(1)*x.Ne(2)/in - 1
	cur := g.View(x, 0, []int{in, n}, nil)
	next := g.View(x, in*x.Nb(0), []int{in, n}, nil)
	t0 := g.View(t, 0, []int{in, out}, nil)
	t1 := g.View(t, t.Nb(2), []int{in, out}, nil)
	return g.Add(g.MulMat(t0, cur), g.MulMat(t1, next))
}

// blockSamples views blockFIR's products y as rows [n, C, B]: the first n
// outputs of each row's blocks.
func blockSamples(g *ggml.Graph, y *ggml.Tensor, n, c, b, nb int) *ggml.Tensor {
	row := (nb + 1) * y.Nb(1)
	return g.View(y, 0, []int{n, c, b}, []int{row, row * c})
}

// perBlock spreads a per-channel parameter p [1, C, 1] over blockFIR's
// columns for B rows of nb+1 blocks: [1, (nb+1)·C·B - 1].
func perBlock(g *ggml.Graph, p *ggml.Tensor, b, nb int) *ggml.Tensor {
	c := p.Ne(1)
	s := g.Add(g.Zeros(ggml.F32, 1, nb+1, c, b), g.Reshape(p, 1, 1, c, 1))
	return g.View(s, 0, []int{1, (nb+1)*c*b - 1}, nil)
}
