package vae

import (
	"context"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

func audioConfig(t *testing.T, src weights.Source) *AudioConfig {
	t.Helper()
	md := src.Metadata()
	cfg, err := ParseAudioConfig([]byte(md["audio_vae/config.json"]), []byte(md["audio_vae/metadata.json"]))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func newTestAudio(t *testing.T, part AudioPart, o AudioOptions) (*AudioVAE, *auditor) {
	name := "audio_weights_encoder"
	if part == AudioDecoderPart {
		name = "audio_weights_decoder"
	}
	src := openFixture(t, name)
	a, err := LoadAudio(parityBackend(t), src, audioConfig(t, src), part, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	au := &auditor{t: t}
	a.inspect = au.inspect
	return a, au
}

func TestAudioEncode(t *testing.T) {
	a, au := newTestAudio(t, AudioEncoderPart, AudioOptions{Precision: exactKV})
	fx := openFixture(t, "audio_encode")
	names := []string{"enc.block.0", "enc.block.1.block.0", "enc.block.1", "enc.out", "pre_block.attn", "pre_block", "mean_proj"}
	rec := record(names...)
	a.Tap = rec.tap
	wave, ws := fixtureTensor(t, fx, "input.waveform")
	z, err := a.Encode(context.Background(), Audio{Samples: int(ws[2]), Data: wave})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		want, s := fixtureTensor(t, fx, "tap."+n)
		got := rec.values[n]
		if n == "mean_proj" { // ggml [C, T, 2] is [2][T][C]; the reference is [2][C][T]
			c, tt := int(s[1]), int(s[2])
			got = append(transpose(got[:c*tt], c, tt), transpose(got[c*tt:], c, tt)...)
		}
		checkRel(t, n, got, want, tolF32)
	}
	want, s := fixtureTensor(t, fx, "output.latent")
	if z.C != int(s[1]) || z.T != int(s[3]) {
		t.Fatalf("latent %dx2x%d, want %v", z.C, z.T, s)
	}
	checkRel(t, "audio latent", z.Data, want, tolF32)
	// the backend's causal flash attention (bf16 K/V on the CPU)
	a.opt.Precision = ggml.Precision{}
	zf, err := a.Encode(context.Background(), Audio{Samples: int(ws[2]), Data: wave})
	if err != nil {
		t.Fatal(err)
	}
	checkRel(t, "audio latent, fast attention", zf.Data, want, tolF16)
	au.done()
}

func TestAudioDecode(t *testing.T) {
	a, au := newTestAudio(t, AudioDecoderPart, AudioOptions{Precision: exactKV})
	fx := openFixture(t, "audio_decode")
	names := []string{"dec_in_proj", "dec.conv_pre", "dec.ups.0", "dec.resblocks.0", "dec.activation_post", "dec.conv_post"}
	rec := record(names...)
	a.Tap = rec.tap
	zd, zs := fixtureTensor(t, fx, "input.latent")
	y, err := a.Decode(context.Background(), AudioLatent{C: int(zs[1]), T: int(zs[3]), Data: zd})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		want, _ := fixtureTensor(t, fx, "tap."+n)
		checkRel(t, n, rec.values[n], want, tolF32)
	}
	want, _ := fixtureTensor(t, fx, "output.waveform")
	checkRel(t, "waveform", y.Data, want, tolF32)
	au.done()
}
