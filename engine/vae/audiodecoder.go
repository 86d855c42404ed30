package vae

import (
	"h3studio/engine/ggml"
	"h3studio/engine/tap"
)

// Audio decoder: dec_in_proj, then BigVGAN: conv_pre, transposed-conv
// upsamples each followed by the average of three AMP resblocks whose
// activations are anti-aliased SnakeBeta (2x Kaiser-sinc upsample, SnakeBeta,
// Kaiser-sinc low-pass and 2x downsample), then activation_post and
// conv_post. Activations are ggml [L, C, stereo].
// ref: ComfyUI comfy/ldm/minimax/audio_vae.py BigVGAN, AMPBlock1,
// Activation1d, UpSample1d, DownSample1d, SnakeBeta.

// aaSnake is Activation1d(SnakeBeta): the resampling filters become
// block-Toeplitz matrices (fir.go), so each is a pair of MUL_MATs.
type aaSnake struct {
	Alpha   *ggml.Tensor `st:"act.alpha" shape:"c" ggml:"1,c,1" transform:"exp"`                                       // exp(alpha)
	InvBeta *ggml.Tensor `st:"act.beta" shape:"c" ggml:"1,c,1" transform:"snakebeta_inv"`                              // 1/(exp(beta)+1e-9)
	Up      *ggml.Tensor `st:"upsample.filter" shape:"1,1,taps" ggml:"blk,up_out,2" transform:"up_blocks"`             // T0, T1
	Down    *ggml.Tensor `st:"downsample.lowpass.filter" shape:"1,1,taps" ggml:"up_out,blk,2" transform:"down_blocks"` // T0, T1
	c       int
}

func (a *aaSnake) Dims() map[string]int64 {
	return map[string]int64{"c": int64(a.c), "taps": audioFilterTaps, "blk": firBlock, "up_out": audioResampling * firBlock}
}

// Replicate padding of the polyphase upsampler and of the low-pass filter
// for 12 taps at ratio 2 (UpSample1d pads 5 and crops 15 per side;
// LowPassFilter1d pads 5 left, 6 right).
const (
	upPad       = 3
	upTaps      = 7
	downPadLeft = audioFilterTaps/2 - 1
	downPadRite = audioFilterTaps / 2
)

// forward applies the anti-aliased activation to x [L, C, B]. The snake
// runs over the upsampler's blocks as they come, the padding's outputs
// too, which the downsampler's padding then leaves out.
func (a *aaSnake) forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	n, c, b := x.Ne(0), x.Ne(1), x.Ne(2)
	nb := (n + firBlock - 1) / firBlock
	up := blockFIR(g, a.Up, blockRows(g, x, upPad, upPad, firBlock, nb)) // phases interleaved
	s := g.Snake(up, perBlock(g, a.Alpha, b, nb), perBlock(g, a.InvBeta, b, nb))
	s = blockSamples(g, s, audioResampling*n, c, b, nb)
	y := blockFIR(g, a.Down, blockRows(g, s, downPadLeft, downPadRite, audioResampling*firBlock, nb))
	return g.Cont(blockSamples(g, y, n, c, b, nb))
}

// convT1d is a weight-normalised ConvTranspose1d: the checkpoint keeps
// [Cin, Cout, K] (weight norm over Cin), ggml [K, Cout, Cin].
type convT1d struct {
	W           *ggml.Tensor `st:"weight" shape:"cin,cout,k" ggml:"k,cout,cin" transform:"weightnorm"`
	B           *ggml.Tensor `st:"bias" shape:"cout" ggml:"1,cout"`
	cin, cout   int
	k           int
	stride, pad int
}

func (c *convT1d) Dims() map[string]int64 {
	return map[string]int64{"cin": int64(c.cin), "cout": int64(c.cout), "k": int64(c.k)}
}

// upStage is one entry of BigVGAN's ups (a ModuleList of one conv each).
type upStage struct {
	Conv convT1d `st:"0"`
}

type ampBlock struct {
	Acts   [6]aaSnake `st:"activations"`
	Convs1 [3]wnConv  `st:"convs1"`
	Convs2 [3]wnConv  `st:"convs2"`
}

// Forward: for each pair, x += conv2(act(conv1(act(x)))).
func (r *ampBlock) Forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	for p := range r.Convs1 {
		y := r.Convs1[p].forward(g, r.Acts[2*p].forward(g, x))
		y = r.Convs2[p].forward(g, r.Acts[2*p+1].forward(g, y))
		x = g.Add(y, x)
	}
	return x
}

// inProj is dec_in_proj, a plain 1x1 Conv1d.
type inProj struct {
	W *ggml.Tensor `st:"weight" shape:"cout,cin,1" ggml:"1,cin,cout"`
	B *ggml.Tensor `st:"bias" shape:"cout" ggml:"1,cout,1"`
	conv1d
}

func (c *inProj) Dims() map[string]int64 { return c.dims() }

// postConv is conv_post: weight-normalised, no bias.
type postConv struct {
	W *ggml.Tensor `st:"weight" shape:"cout,cin,k" ggml:"k,cin,cout" transform:"weightnorm"`
	conv1d
}

func (c *postConv) Dims() map[string]int64 { return c.dims() }

// audioDecoder is dec_in_proj + BigVGAN. Resblocks are numbered across
// stages as in the checkpoint: stage i's block j is Res[i·3 + j].
type audioDecoder struct {
	InProj  inProj     `st:"dec_in_proj"`
	Pre     wnConv     `st:"decoder.conv_pre"`
	Ups     []upStage  `st:"decoder.ups"`
	Res     []ampBlock `st:"decoder.resblocks"`
	PostAct aaSnake    `st:"decoder.activation_post"`
	Post    postConv   `st:"decoder.conv_post"`
}

// newAudioDecoder lays out the decoder c describes, weights not loaded.
func newAudioDecoder(c *AudioConfig) *audioDecoder {
	m := &c.Model
	ch := m.DecoderDim
	d := &audioDecoder{InProj: inProj{conv1d: conv1d{c.LatentChannels, m.LatentDim, 1, 1, 0, 1}},
		Pre: wnConv{conv1d: conv1d{m.LatentDim, ch, 7, 1, 3, 1}}}
	for i, rate := range m.DecoderRates {
		k := m.DecoderKernels[i]
		d.Ups = append(d.Ups, upStage{convT1d{cin: ch, cout: ch / 2, k: k, stride: rate, pad: (k - rate) / 2}})
		ch /= 2
		for _, rk := range audioResKernels {
			d.Res = append(d.Res, newAMPBlock(ch, rk))
		}
	}
	d.PostAct = aaSnake{c: ch}
	d.Post = postConv{conv1d: conv1d{ch, 1, 7, 1, 3, 1}}
	return d
}

func newAMPBlock(ch, k int) ampBlock {
	var r ampBlock
	for a := range r.Acts {
		r.Acts[a] = aaSnake{c: ch}
	}
	for p, dil := range audioResDilations {
		r.Convs1[p] = wnConv{conv1d: conv1d{ch, ch, k, 1, dil * (k - 1) / 2, dil}}
		r.Convs2[p] = wnConv{conv1d: conv1d{ch, ch, k, 1, (k - 1) / 2, 1}}
	}
	return r
}

// Forward maps de-normalised latents z [T, C, 2] to waveforms [T·hop, 1, 2]
// (not yet clamped).
func (d *audioDecoder) Forward(g *ggml.Graph, z *ggml.Tensor, tp *tap.Graph) *ggml.Tensor {
	x := d.InProj.apply(g, z, d.InProj.W, d.InProj.B)
	tp.Mark("dec_in_proj", x)
	x = d.Pre.forward(g, x)
	tp.Mark("dec.conv_pre", x)
	nk := len(audioResKernels)
	for i := range d.Ups {
		x = d.Ups[i].Conv.forward(g, x)
		if i == 0 {
			tp.Mark("dec.ups.0", x)
		}
		var sum *ggml.Tensor
		blocks := d.Res[i*nk : (i+1)*nk]
		for j := range blocks {
			y := blocks[j].Forward(g, x)
			if i == 0 && j == 0 {
				tp.Mark("dec.resblocks.0", y)
			}
			if sum == nil {
				sum = y
			} else {
				sum = g.Add(sum, y)
			}
		}
		x = g.Scale(sum, 1/float32(len(blocks)))
	}
	x = d.PostAct.forward(g, x)
	tp.Mark("dec.activation_post", x)
	x = d.Post.apply(g, x, d.Post.W, nil)
	tp.Mark("dec.conv_post", x)
	return x
}

// forward runs the transposed conv per stereo channel (ggml's op has no
// batch axis) on x [L, Cin, B] and returns [L', Cout, B].
func (c *convT1d) forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	var out *ggml.Tensor
	for b := range x.Ne(2) {
		xb := g.View(x, b*x.Nb(2), []int{x.Ne(0), x.Ne(1)}, []int{x.Nb(1)})
		y := g.Add(g.ConvTranspose1D(xb, c.W, c.stride, c.pad), c.B)
		if out == nil {
			out = y
		} else {
			out = g.Concat(out, y, 2)
		}
	}
	return out
}
