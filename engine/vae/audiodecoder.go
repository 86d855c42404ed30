package vae

import (
	"fmt"

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

// aaSnake is Activation1d(SnakeBeta): the resampling filters become small
// conv kernels, so each step is an IM2COL plus a MUL_MAT.
type aaSnake struct {
	Alpha, InvBeta *ggml.Tensor // [1, C, 1]: exp(alpha), 1/(exp(beta)+1e-9)
	Up             *ggml.Tensor // [7, 1, 2]: polyphase upsampling kernel
	Down           *ggml.Tensor // [12, 1, 1]: low-pass kernel (stride 2)
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

func loadAASnake(l *loader, a *aaSnake, name string, c int) {
	al := l.read(name+".act.alpha", c)
	be := l.read(name+".act.beta", c)
	up := l.read(name+".upsample.filter", 1, 1, audioFilterTaps)
	down := l.read(name+".downsample.lowpass.filter", 1, 1, audioFilterTaps)
	if al == nil || be == nil || up == nil || down == nil {
		return
	}
	alpha, inv := make([]float32, c), make([]float32, c)
	for i := range c {
		alpha[i] = float32(exp(al[i]))
		inv[i] = float32(1 / (exp(be[i]) + audioSnakeEps))
	}
	// UpSample1d is ratio·conv_transpose(pad(x, 5), f, stride 2)[15:-15].
	// Output 2q takes x_p[q+2+j]·f[11-2j], output 2q+1 takes
	// x_p[q+3+j]·f[10-2j] (j < 6); with z = x padded by 3 (z[m] = x_p[m+2])
	// both phases are one 7-tap correlation over z, with kernels
	// [2f11, 2f9, .., 2f1, 0] and [0, 2f10, .., 2f0].
	poly := make([]float32, 2*upTaps)
	for k := range upTaps {
		if k <= 5 {
			poly[k] = audioResampling * up[11-2*k]
		}
		if k >= 1 {
			poly[upTaps+k] = audioResampling * up[12-2*k]
		}
	}
	l.put(&a.Alpha, name+".act.alpha", alpha, 1, c, 1)
	l.put(&a.InvBeta, name+".act.beta", inv, 1, c, 1)
	l.put(&a.Up, name+".upsample.filter", poly, upTaps, 1, 2)
	l.put(&a.Down, name+".downsample.lowpass.filter", down, audioFilterTaps, 1, 1)
}

// forward applies the anti-aliased activation to x [L, C, B].
func (a *aaSnake) forward(g *ggml.Graph, x *ggml.Tensor) *ggml.Tensor {
	n, c, b := x.Ne(0), x.Ne(1), x.Ne(2)
	z := replicatePad(g, x, upPad, upPad)
	up := g.Conv1D(g.Reshape(z, n+2*upPad, 1, c*b), a.Up, 1, 0, 1) // [L, 2, C·B]
	up = g.Reshape(g.Cont(g.Permute(up, 1, 0, 2, 3)), 2*n, c, b)   // phases interleaved
	s := g.Snake(up, a.Alpha, a.InvBeta)
	u := replicatePad(g, s, downPadLeft, downPadRite)
	y := g.Conv1D(g.Reshape(u, 2*n+downPadLeft+downPadRite, 1, c*b), a.Down, audioResampling, 0, 1) // [L, 1, C·B]
	return g.Reshape(y, n, c, b)
}

// replicatePad pads axis 0 of x [L, C, B] with copies of its first and last
// elements, from views and concatenations.
func replicatePad(g *ggml.Graph, x *ggml.Tensor, left, right int) *ggml.Tensor {
	edge := func(i, k int) *ggml.Tensor {
		col := g.View(x, i*4, []int{1, x.Ne(1), x.Ne(2)}, []int{x.Nb(1), x.Nb(2)})
		out := col
		for range k - 1 {
			out = g.Concat(out, col, 0)
		}
		return out
	}
	if left > 0 {
		x = g.Concat(edge(0, left), x, 0)
	}
	if right > 0 {
		x = g.Concat(x, edge(x.Ne(0)-1, right), 0)
	}
	return x
}

// convT1d is a weight-normalised ConvTranspose1d: ggml [K, Cout, Cin].
type convT1d struct {
	W, B        *ggml.Tensor
	stride, pad int
}

type ampBlock struct {
	Acts   [6]aaSnake
	Convs1 [3]conv1d
	Convs2 [3]conv1d
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

type decoderStage struct {
	Up     convT1d
	Blocks []ampBlock
}

// audioDecoder is dec_in_proj + BigVGAN.
type audioDecoder struct {
	InProj  conv1d
	Pre     conv1d
	Stages  []decoderStage
	PostAct aaSnake
	Post    conv1d
}

func loadAudioDecoder(l *loader, c *AudioConfig) *audioDecoder {
	m := &c.Model
	d := &audioDecoder{Stages: make([]decoderStage, len(m.DecoderRates))}
	if raw := l.read("dec_in_proj.weight", m.LatentDim, c.LatentChannels, 1); raw != nil {
		l.put(&d.InProj.W, "dec_in_proj.weight", raw, 1, c.LatentChannels, m.LatentDim)
	}
	l.tensor(&d.InProj.B, "dec_in_proj.bias", []int{m.LatentDim}, 1, m.LatentDim, 1)
	d.InProj.stride, d.InProj.dilate = 1, 1
	ch := m.DecoderDim
	loadWNConv1D(l, &d.Pre, "decoder.conv_pre", m.LatentDim, ch, 7, 1, 3, 1, true)
	nk := len(audioResKernels)
	for i, rate := range m.DecoderRates {
		st := &d.Stages[i]
		k := m.DecoderKernels[i]
		p := fmt.Sprintf("decoder.ups.%d.0", i)
		st.Up.stride, st.Up.pad = rate, (k-rate)/2
		// ConvTranspose1d keeps [Cin, Cout, K]; weight norm runs over Cin
		l.put(&st.Up.W, p+".weight", l.weightNorm(p, ch, ch/2, k), k, ch/2, ch)
		l.tensor(&st.Up.B, p+".bias", []int{ch / 2}, 1, ch/2)
		ch /= 2
		st.Blocks = make([]ampBlock, nk)
		for j, rk := range audioResKernels {
			r := &st.Blocks[j]
			q := fmt.Sprintf("decoder.resblocks.%d", i*nk+j)
			for a := range r.Acts {
				loadAASnake(l, &r.Acts[a], fmt.Sprintf("%s.activations.%d", q, a), ch)
			}
			for pi, dil := range audioResDilations {
				loadWNConv1D(l, &r.Convs1[pi], fmt.Sprintf("%s.convs1.%d", q, pi), ch, ch, rk, 1, dil*(rk-1)/2, dil, true)
				loadWNConv1D(l, &r.Convs2[pi], fmt.Sprintf("%s.convs2.%d", q, pi), ch, ch, rk, 1, (rk-1)/2, 1, true)
			}
		}
	}
	loadAASnake(l, &d.PostAct, "decoder.activation_post", ch)
	loadWNConv1D(l, &d.Post, "decoder.conv_post", ch, 1, 7, 1, 3, 1, false)
	return d
}

// Forward maps de-normalised latents z [T, C, 2] to waveforms [T·hop, 1, 2]
// (not yet clamped).
func (d *audioDecoder) Forward(g *ggml.Graph, z *ggml.Tensor, tp *tap.Graph) *ggml.Tensor {
	x := d.InProj.forward(g, z)
	tp.Mark("dec_in_proj", x)
	x = d.Pre.forward(g, x)
	tp.Mark("dec.conv_pre", x)
	for i := range d.Stages {
		st := &d.Stages[i]
		x = st.Up.forward(g, x)
		if i == 0 {
			tp.Mark("dec.ups.0", x)
		}
		var sum *ggml.Tensor
		for j := range st.Blocks {
			y := st.Blocks[j].Forward(g, x)
			if i == 0 && j == 0 {
				tp.Mark("dec.resblocks.0", y)
			}
			if sum == nil {
				sum = y
			} else {
				sum = g.Add(sum, y)
			}
		}
		x = g.Scale(sum, 1/float32(len(st.Blocks)))
	}
	x = d.PostAct.forward(g, x)
	tp.Mark("dec.activation_post", x)
	x = d.Post.forward(g, x)
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
