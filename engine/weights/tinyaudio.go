package weights

import (
	"fmt"
	"math"

	"h3studio/engine/arch"
)

// audioVAESpecs lists audio_vae/model.safetensors (F32): the DAC-style
// encoder (weight-normalised convolutions, Snake alphas), the attention
// pre_block, the posterior projections and the BigVGAN decoder whose
// anti-aliased activations carry fixed Kaiser-sinc filters.
func audioVAESpecs(c *arch.AudioVAE) specList {
	var l specList
	k := &c.Model
	wn := func(p string, outer, inner, kern int64, bias bool, biasLen int64) {
		l.add(p+".weight_v", F32, initWeight, outer, inner, kern)
		l.add(p+".weight_g", F32, initNorm, outer, 1, 1)
		if bias {
			l.add(p+".bias", F32, initBias, biasLen)
		}
	}
	plain := func(p string, out, in int64) {
		l.add(p+".weight", F32, initWeight, out, in, 1)
		l.add(p+".bias", F32, initBias, out)
	}
	ln := func(p string, n int64) {
		l.add(p+".weight", F32, initNorm, n)
		l.add(p+".bias", F32, initBias, n)
	}
	latentDim, lc := int64(k.LatentDim), int64(c.LatentChannels)
	wn("encoder.block.0", int64(k.EncoderDim), 1, 7, true, int64(k.EncoderDim))
	ch := int64(k.EncoderDim)
	for s, stride := range k.EncoderRates {
		p := fmt.Sprintf("encoder.block.%d", s+1)
		for r := range arch.AudioEncDilations {
			q := fmt.Sprintf("%s.block.%d", p, r)
			l.add(q+".block.0.alpha", F32, initNorm, 1, ch, 1)
			wn(q+".block.1", ch, ch, 7, true, ch)
			l.add(q+".block.2.alpha", F32, initNorm, 1, ch, 1)
			wn(q+".block.3", ch, ch, 1, true, ch)
		}
		l.add(p+".block.3.alpha", F32, initNorm, 1, ch, 1)
		wn(p+".block.4", 2*ch, ch, 2*int64(stride), true, 2*ch)
		ch *= 2
	}
	last := len(k.EncoderRates) + 1
	l.add(fmt.Sprintf("encoder.block.%d.alpha", last), F32, initNorm, 1, latentDim, 1)
	wn(fmt.Sprintf("encoder.block.%d", last+1), latentDim, latentDim, 3, true, latentDim)

	ln("pre_block.norm1", latentDim)
	l.add("pre_block.attn.qkv.weight", F32, initWeight, 3*latentDim, latentDim)
	l.add("pre_block.attn.q_bias", F32, initBias, latentDim)
	l.add("pre_block.attn.v_bias", F32, initBias, latentDim)
	l.add("pre_block.attn.zero_k_bias", F32, initFixed, latentDim)
	l[len(l)-1].fixed = make([]float32, latentDim)
	l.linear("pre_block.attn.proj", F32, lc, lc, true)
	ln("pre_block.norm3", latentDim)
	l.linear("pre_block.proj", F32, lc, latentDim, true)
	ln("pre_block.norm2", lc)
	ln("pre_block.mlp.norm", lc)
	l.linear("pre_block.mlp.w0", F32, 2*lc, lc, true)
	l.linear("pre_block.mlp.w1", F32, 2*lc, lc, true)
	l.linear("pre_block.mlp.w2", F32, lc, 2*lc, true)
	plain("mean_proj", lc, lc)
	plain("logs_proj", lc, lc)
	plain("dec_in_proj", latentDim, lc)
	audioDecoderSpecs(&l, k, wn)
	return l
}

// audioDecoderSpecs appends the BigVGAN decoder to l.
func audioDecoderSpecs(l *specList, k *arch.AudioVAEModel, wn func(p string, outer, inner, kern int64, bias bool, biasLen int64)) {
	taps := int64(arch.AudioFilterTaps)
	filter := kaiserSincFilter(0.25, 0.3, arch.AudioFilterTaps)
	act := func(p string, ch int64) {
		l.add(p+".act.alpha", F32, initNorm, ch)
		l.add(p+".act.beta", F32, initNorm, ch)
		*l = append(*l,
			tensorSpec{name: p + ".upsample.filter", dtype: F32, shape: []int64{1, 1, taps}, init: initFixed, fixed: filter},
			tensorSpec{name: p + ".downsample.lowpass.filter", dtype: F32, shape: []int64{1, 1, taps}, init: initFixed, fixed: filter})
	}
	wn("decoder.conv_pre", int64(k.DecoderDim), int64(k.LatentDim), 7, true, int64(k.DecoderDim))
	ch := int64(k.DecoderDim)
	dil := arch.AudioResDilations
	for i := range k.DecoderRates {
		out := ch / 2
		wn(fmt.Sprintf("decoder.ups.%d.0", i), ch, out, int64(k.DecoderKernels[i]), true, out)
		for j, kern := range arch.AudioResKernels {
			p := fmt.Sprintf("decoder.resblocks.%d", i*len(arch.AudioResKernels)+j)
			for a := 0; a < 2*len(dil); a++ {
				act(fmt.Sprintf("%s.activations.%d", p, a), out)
			}
			for d := range dil {
				wn(fmt.Sprintf("%s.convs1.%d", p, d), out, out, int64(kern), true, out)
				wn(fmt.Sprintf("%s.convs2.%d", p, d), out, out, int64(kern), true, out)
			}
		}
		ch = out
	}
	act("decoder.activation_post", ch)
	wn("decoder.conv_post", 1, ch, 7, false, 0)
}

// kaiserSincFilter is BigVGAN's anti-aliasing low-pass filter (kaiser
// window times sinc, normalised to unit sum) for an even kernel size.
func kaiserSincFilter(cutoff, halfWidth float64, size int) []float32 {
	half := size / 2
	a := 2.285*float64(half-1)*math.Pi*4*halfWidth + 7.95
	var beta float64
	switch {
	case a > 50:
		beta = 0.1102 * (a - 8.7)
	case a >= 21:
		beta = 0.5842*math.Pow(a-21, 0.4) + 0.07886*(a-21)
	}
	f := make([]float64, size)
	var sum float64
	for n := 0; n < size; n++ {
		r := 2*float64(n)/float64(size-1) - 1
		w := besselI0(beta*math.Sqrt(1-r*r)) / besselI0(beta)
		t := float64(n-half) + 0.5
		x := 2 * cutoff * t
		sinc := 1.0
		if x != 0 {
			sinc = math.Sin(math.Pi*x) / (math.Pi * x)
		}
		f[n] = 2 * cutoff * w * sinc
		sum += f[n]
	}
	out := make([]float32, size)
	for i := range f {
		out[i] = float32(f[i] / sum)
	}
	return out
}

// besselI0 is the modified Bessel function of the first kind, order 0.
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 50; k++ {
		term *= (x / (2 * float64(k))) * (x / (2 * float64(k)))
		sum += term
	}
	return sum
}
