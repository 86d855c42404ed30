package ggml

// Convolutions built from IM2COL + MUL_MAT (both run on Metal). Layouts are
// ggml order: 1-D data [L, C, B], 2-D data [W, H, C, N], 3-D data
// [W, H, C, T] (frames outermost). Weights keep PyTorch's memory layout,
// which in ggml order is [K, Cin, Cout] (1-D) and [KW, KH, Cin, Cout] (2-D);
// see Conv3DWeight for 3-D. Every output is channel-major like the input.

// Conv1D is a 1-D convolution of x [L, Cin, B] (f32) with w [K, Cin, Cout]
// (any matmul dtype): zero padding pad on both sides, stride and dilation.
// The result is [Lout, Cout, B]. Outputs longer than im2colLimit are
// computed in pieces of at most that many positions, joined with CONCAT.
func (g *Graph) Conv1D(x, w *Tensor, stride, pad, dilation int) *Tensor {
	const op = "Conv1D"
	g.own(op, x, w)
	g.need(op, stride > 0 && dilation > 0 && pad >= 0, "stride %d, pad %d, dilation %d", stride, pad, dilation)
	g.need(op, x.dt == F32 && x.Contiguous() && x.ne[3] == 1, "input %s must be contiguous f32 [L, C, B]", x)
	g.need(op, w.ne[1] == x.ne[1] && w.ne[3] == 1, "kernel %s does not match the %d channels of %s", w, x.ne[1], x)
	lout := convOut(x.ne[0], w.ne[0], stride, pad, dilation)
	g.need(op, lout > 0, "input %s is shorter than kernel %s", x, w)
	if lout <= im2colLimit {
		return g.conv1DPiece(x, w, stride, pad, dilation, lout)
	}
	c, b := int(x.ne[1]), int(x.ne[2])
	if pad > 0 { // explicit zeros, so that every piece is unpadded
		x = g.Concat(g.Concat(g.Zeros(F32, pad, c, b), x, 0), g.Zeros(F32, pad, c, b), 0)
	}
	span := int64(dilation)*(w.ne[0]-1) + 1
	var y *Tensor
	for at := int64(0); at < lout; at += im2colLimit {
		n := min(im2colLimit, lout-at)
		in := g.Cont(g.View(x, int(at)*stride*4, []int{int((n-1)*int64(stride) + span), c, b}, []int{int(x.nb[1]), int(x.nb[2])}))
		p := g.conv1DPiece(in, w, stride, 0, dilation, n)
		if y == nil {
			y = p
		} else {
			y = g.Concat(y, p, 0)
		}
	}
	return y
}

// im2colLimit is the most output positions of one 1-D IM2COL: ggml-cuda
// launches a grid row per position, and a grid has at most 65,535 rows
// (longer ones fail with "invalid argument"; the release's audio decoder
// reaches 74,400 samples at 864x480x56). A variable so tests can lower it.
var im2colLimit int64 = 65535

// conv1DPiece is one IM2COL + MUL_MAT convolution of lout outputs.
func (g *Graph) conv1DPiece(x, w *Tensor, stride, pad, dilation int, lout int64) *Tensor {
	// im2col reads only the kernel's shape; a view keeps quantized kernels out of it
	kshape := g.kernelShape(w, int(w.ne[0]), int(w.ne[1]))
	cols := g.wrap(cIm2Col(g.ctx, kshape.h, x.h, stride, 0, pad, 0, dilation, 0, false, F32)) // [Cin*K, Lout, B]
	k := int(w.ne[0] * w.ne[1])
	y := g.MulMat(g.Reshape(w, k, int(w.ne[2])), g.Reshape(cols, k, int(lout*x.ne[2]))) // [Cout, Lout*B]
	y = g.Reshape(y, int(w.ne[2]), int(lout), int(x.ne[2]))
	return g.Cont(g.Permute(y, 1, 0, 2, 3))
}

// kernelShape returns a tensor of the kernel's leading shape for IM2COL,
// which reads only the shape: a view of w, or for block-quantized kernels
// (whose first axis cannot be viewed) an unset f32 input of that shape.
func (g *Graph) kernelShape(w *Tensor, shape ...int) *Tensor {
	if w.dt.Quantized() {
		return g.Input("", F32, shape...)
	}
	return g.View(w, 0, shape, nil)
}

func convOut(in, k int64, s, p, d int) int64 { return (in+2*int64(p)-int64(d)*(k-1)-1)/int64(s) + 1 }

// Conv2D is a 2-D convolution of x [W, H, Cin, N] (f32) with w [KW, KH, Cin,
// Cout]: symmetric zero padding (padW, padH), stride and dilation per axis.
// The result is [OW, OH, Cout, N].
func (g *Graph) Conv2D(x, w *Tensor, stride, pad, dilation [2]int) *Tensor {
	const op = "Conv2D"
	g.own(op, x, w)
	cols, ow, oh := g.im2col2D(op, x, w, stride, pad, dilation)
	k := int(w.ne[0] * w.ne[1] * w.ne[2])
	y := g.MulMat(g.Reshape(w, k, int(w.ne[3])), g.Reshape(cols, k, int(ow*oh*x.ne[3]))) // [Cout, OW*OH*N]
	y = g.Reshape(y, int(w.ne[3]), int(ow), int(oh), int(x.ne[3]))
	return g.Cont(g.Permute(y, 2, 0, 1, 3))
}

func (g *Graph) im2col2D(op string, x, w *Tensor, stride, pad, dilation [2]int) (cols *Tensor, ow, oh int64) {
	for i := range 2 {
		g.need(op, stride[i] > 0 && dilation[i] > 0 && pad[i] >= 0, "stride %v, pad %v, dilation %v", stride, pad, dilation)
	}
	g.need(op, x.dt == F32 && x.Contiguous(), "input %s must be contiguous f32 [W, H, C, N]", x)
	g.need(op, w.ne[2] == x.ne[2], "kernel %s does not match the %d channels of %s", w, x.ne[2], x)
	ow = convOut(x.ne[0], w.ne[0], stride[0], pad[0], dilation[0])
	oh = convOut(x.ne[1], w.ne[1], stride[1], pad[1], dilation[1])
	g.need(op, ow > 0 && oh > 0, "input %s is smaller than kernel %s", x, w)
	kshape := g.kernelShape(w, int(w.ne[0]), int(w.ne[1]), int(w.ne[2]))
	cols = g.wrap(cIm2Col(g.ctx, kshape.h, x.h, stride[0], stride[1], pad[0], pad[1], dilation[0], dilation[1], true, F32))
	return cols, ow, oh // cols [Cin*KH*KW, OW, OH, N]
}

// TemporalPad is how Conv3D fills the causal frames before the first one.
type TemporalPad int

const (
	// PadZeros prepends zero frames.
	PadZeros TemporalPad = iota
	// PadReplicate repeats the first frame.
	PadReplicate
)

// Conv3DOptions configures Conv3D. Spatial padding is symmetric zero
// padding; temporal padding is causal (all before the first frame).
type Conv3DOptions struct {
	Stride   [3]int // W, H, T; zero values mean 1
	Pad      [2]int // W, H
	CausalT  int    // frames prepended before the first frame
	TPadMode TemporalPad
}

// Conv3D is a 3-D convolution of x [W, H, Cin, T] (f32) with w in the
// layout of Conv3DWeight, [KW, KH, Cin, Cout*KT], built only from ops ggml-metal
// runs: causal frames are prepended with CONCAT, one 2-D IM2COL covers all
// frames, and each temporal tap is a strided VIEW of it times that tap's
// [KW*KH*Cin, Cout] kernel (MUL_MAT), summed with ADD. The result is
// [OW, OH, Cout, OT]. (ggml_conv_3d would use IM2COL_3D, which Metal lacks.)
func (g *Graph) Conv3D(x, w *Tensor, kt int, o Conv3DOptions) *Tensor {
	const op = "Conv3D"
	g.own(op, x, w)
	st := o.Stride
	for i := range st {
		if st[i] == 0 {
			st[i] = 1
		}
	}
	g.need(op, kt > 0 && w.ne[3]%int64(kt) == 0, "kernel %s does not hold %d temporal taps", w, kt)
	g.need(op, o.CausalT >= 0, "negative causal padding %d", o.CausalT)
	cout := int(w.ne[3]) / kt
	if o.CausalT > 0 {
		x = g.padFrames(x, o.CausalT, o.TPadMode)
	}
	t := int(x.ne[3])
	ot := (t-kt)/st[2] + 1
	g.need(op, ot > 0, "%d frames (after padding) are fewer than %d taps", t, kt)
	cols, ow, oh := g.im2col2D(op, x, w, [2]int{st[0], st[1]}, o.Pad, [2]int{1, 1}) // [K2, OW, OH, T]
	k2 := int(w.ne[0] * w.ne[1] * w.ne[2])
	tapBytes := w.dt.RowBytes(k2) * cout
	var y *Tensor
	for i := range kt {
		wi := g.View(w, i*tapBytes, []int{k2, cout}, nil)
		frames := g.View(cols, i*int(cols.nb[3]), []int{k2, int(ow * oh), ot}, []int{int(cols.nb[1]), st[2] * int(cols.nb[3])})
		if st[2] > 1 && ot > 1 {
			// A frame-strided view is not contiguous, and ggml's CPU
			// matmul then drops from its blocked kernel to row-by-row
			// dot products (8x slower here); the copy costs far less.
			frames = g.Cont(frames)
		}
		yi := g.MulMat(wi, frames) // [Cout, OW*OH, OT]
		if y == nil {
			y = yi
		} else {
			y = g.Add(y, yi)
		}
	}
	y = g.Reshape(y, cout, int(ow), int(oh), ot)
	return g.Cont(g.Permute(y, 2, 0, 1, 3))
}

// padFrames prepends n frames to x [W, H, C, T] (zeros or copies of frame 0).
func (g *Graph) padFrames(x *Tensor, n int, mode TemporalPad) *Tensor {
	frame := []int{int(x.ne[0]), int(x.ne[1]), int(x.ne[2]), 1}
	switch mode {
	case PadReplicate:
		f0 := g.View(x, 0, frame, nil)
		for range n {
			x = g.Concat(f0, x, 3)
		}
		return x
	default:
		frame[3] = n
		return g.Concat(g.Zeros(x.dt, frame...), x, 3)
	}
}

// Zeros declares an input of the given shape filled with zeros (staged like
// any input), e.g. for PadLeft.
func (g *Graph) Zeros(dt DType, shape ...int) *Tensor {
	t := g.Input("", dt, shape...)
	t.SetRaw(make([]byte, t.NBytes()))
	return t
}

// Conv3DWeight reorders a PyTorch Conv3d weight [Cout, Cin, KT, KH, KW]
// (row-major) into Conv3D's layout: tap-major [KT][Cout][Cin][KH][KW], i.e.
// ggml shape [KW, KH, Cin, Cout*KT].
func Conv3DWeight(w []float32, cout, cin, kt, kh, kw int) []float32 {
	if len(w) != cout*cin*kt*kh*kw {
		panicf("Conv3DWeight: %d values for [%d %d %d %d %d]", len(w), cout, cin, kt, kh, kw)
	}
	out := make([]float32, len(w))
	plane := kh * kw
	for o := range cout {
		for c := range cin {
			for t := range kt {
				src := ((o*cin+c)*kt + t) * plane
				dst := ((t*cout+o)*cin + c) * plane
				copy(out[dst:dst+plane], w[src:src+plane])
			}
		}
	}
	return out
}

// ConvTranspose1D is a transposed 1-D convolution of x [L, Cin] (f32, no
// batch axis) with w [K, Cout, Cin] (f32 or f16; PyTorch's [Cin, Cout, K]
// memory) and the given stride, cropping pad elements from each end as
// PyTorch's padding does: the result is [(L-1)*stride + K - 2*pad, Cout].
func (g *Graph) ConvTranspose1D(x, w *Tensor, stride, pad int) *Tensor {
	const op = "ConvTranspose1D"
	g.own(op, x, w)
	g.need(op, stride > 0 && pad >= 0, "stride %d, pad %d", stride, pad)
	g.need(op, x.dt == F32 && x.Contiguous() && x.ne[2] == 1 && x.ne[3] == 1, "input %s must be contiguous f32 [L, Cin]", x)
	g.need(op, (w.dt == F32 || w.dt == F16) && w.Contiguous() && w.ne[3] == 1, "kernel %s must be contiguous f32 or f16 [K, Cout, Cin]", w)
	g.need(op, w.ne[2] == x.ne[1], "kernel %s does not match the %d channels of %s", w, x.ne[1], x)
	full := g.wrap(cConvTranspose1D(g.ctx, w.h, x.h, stride)) // [(L-1)*s + K, Cout]
	n := int(full.ne[0]) - 2*pad
	g.need(op, n > 0, "padding %d crops all %d outputs", pad, full.ne[0])
	if pad == 0 {
		return full
	}
	return g.Cont(g.View(full, pad*4, []int{n, int(full.ne[1])}, []int{int(full.nb[1])}))
}
