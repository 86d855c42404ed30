package plan

import (
	"h3studio/engine/arch"
	"h3studio/engine/layout"
)

// Residency is how a component's weights are held during its phase. It is
// the one spelling: the planner chooses it (Knobs) and the models take it
// as is (dit.Options, textenc.Options), so nothing translates between
// the plan and a load. It lives here, not in engine/weights, because the
// planner must stay pure Go (weights needs cgo through ggml). The zero
// value is Resident to a model; whether resident weights map zero-copy is
// the file's alignment, which the planner reads as Mapped.
type Residency string

const (
	// Resident weights are loaded (copied or converted) into memory.
	Resident Residency = "resident"
	// Mapped weights are zero-copy file mappings: not dirty, but the GPU
	// touches every page each forward, so they count in the working set.
	Mapped Residency = "mapped"
	// Streamed weights pass through a ring of a few layer slots read from
	// disk each pass (h3.c --ssd-streaming, vpipe's streamed encoder).
	Streamed Residency = "streamed"
)

// Knobs are the residency choices the fitter can change.
type Knobs struct {
	TextEncoder Residency `json:"text_encoder"` // Resident or Streamed
	DiT         Residency `json:"dit"`          // Mapped or Streamed
	VAEDecoder  Residency `json:"vae_decoder"`  // Resident or Streamed
}

// Phase is one stage's memory at its peak. Phases run one after another
// and release their weights before the next; only what they hand on
// (latents, embeddings) is carried.
type Phase struct {
	Name         string    `json:"name"`
	PeakBytes    int64     `json:"peak_bytes"`
	WeightsBytes int64     `json:"weights_bytes"`
	ScratchBytes int64     `json:"scratch_bytes"`
	MediaBytes   int64     `json:"media_bytes"`
	CarriedBytes int64     `json:"carried_bytes"` // dirty memory handed on by earlier phases
	Residency    Residency `json:"residency,omitempty"`
}

// Phase names.
const (
	PhaseLoad      = "load"
	PhaseReference = "reference-decode"
	PhaseText      = "text-encode"
	PhaseDenoise   = "denoise"
	PhaseDecode    = "vae-decode"
	PhaseMux       = "mux"
)

const (
	f32 = 4
	// streamSlots is the ring depth of a streamed component (h3.c keeps
	// two DiT blocks and 2-3 Qwen layers in flight).
	streamSlots = 3
	// vaeTile is the decoder's spatial tile and encoder's tile with its
	// 64-px overlap; vaeChunk the decoder's 7-latent temporal window.
	vaeTile, vaeEncTile, vaeChunk = 256, 320, 7
	// encClip is the encoder's 17-frame clip plus 2 causal pad frames.
	encClip = 19
	// encCh is the encoder's widest full-resolution activation (level 0).
	encCh = 128
	// muxBaseBytes + muxPerPixel x output pixels is the H.264/AAC encoder
	// subprocess: FFmpeg with libx264 (medium, its lookahead frames)
	// peaked at 68, 132 and 293 MiB resident for 128², 512² and 1280x720
	// (/usr/bin/time -v); a flat 256 MiB made a tiny render's plan 3x its
	// measured peak.
	muxBaseBytes = 64 << 20
	muxPerPixel  = 256
	// audioDecodePerLatent: BigVGAN keeps ~6400 channel-samples per audio
	// latent at every stage, x6 live (3 AMP resblocks with 2x anti-alias),
	// x2 stereo, f32.
	audioDecodePerLatent = 6400 * 6 * 2 * f32
)

// DiTRowBytes is the denoise activation scratch per row: the larger of
// the attention stage (x, normed x, QKV in f32, their f16 copies for flash
// attention, attention output) and the MLP stage (x, normed x, fc1's
// gate|value, the SwiGLU product), plus the row's RoPE cos/sin table.
// Flash attention keeps this linear in rows. 215 KB for H3, matching
// vpipe's measured ~200 KB per row (31,335 rows ~ 6.3 GB).
func (d Dims) DiTRowBytes() int64 {
	inner := d.Heads * d.HeadDim
	attn := 2*d.Hidden + 3*inner + 3*inner/2 + inner
	mlp := 2*d.Hidden + 3*d.FFN
	return int64(max(attn, mlp))*f32 + 2*96*f32
}

// QwenTokenBytes is the language model's scratch per token of a row group
// (x, normed x, gate, up, product in f32 plus f16 Q/K/V for flash
// attention).
func (d Dims) QwenTokenBytes() int64 {
	return int64(2*d.QHidden+3*d.QInter)*f32 + int64((d.QHeads+2*d.QKVHeads)*d.QHeadDim)*2
}

// QwenRowGroup is the token rows one prefill graph processes (engine/textenc
// runs a layer as ceil(tokens/QwenRowGroup) graphs): it bounds the
// prefill's scratch, whatever the prompt's length.
const QwenRowGroup = 4096

// QwenPrefillBytes is the device memory a prefill of tokens tokens works
// in beside its weights: every row's hidden state (f32) and one layer's
// rotated keys and values (f16), kept on the device between graphs; one
// row group's scratch; and the group's contiguous copies of the keys and
// values it attends to. A chunk's causal mask is freed before the next and
// fits in the group's scratch. Measured on the H200 (tools/gpu/run.sh,
// bench --qwen): 1.85, 2.94, 4.17 GB at 10,231, 50,000, 100,000 tokens;
// this gives 1.80, 2.94, 4.38 (-2.4 %, 0 %, +4.9 %). The CPU backend
// keeps K/V in f32 (ggml.Backend.KVType), about a sixth more at the
// release's widths; the CPU is the development path, not one the release
// is fitted to.
func (d Dims) QwenPrefillBytes(tokens int) int64 {
	T := int64(tokens)
	kv := int64(d.QKVHeads*d.QHeadDim) * 2
	state := T * (int64(d.QHidden)*f32 + 2*kv)
	group := int64(min(tokens, QwenRowGroup)) * d.QwenTokenBytes()
	perKey := T * 2 * kv
	return state + group + perKey
}

// visionPatchBytes is the vision tower's scratch per 16-px patch.
func (d Dims) visionPatchBytes() int64 { return int64(5*d.VHidden+d.VMLP) * f32 }

func latentBytes(c layout.Canvas, t, ch int) int64 {
	return int64(ch) * int64(t) * int64(c.LatentH()) * int64(c.LatentW()) * f32
}

func pix(c layout.Canvas) int64 { return int64(c.Width) * int64(c.Height) }

// tilePixels is the pixels one VAE tile covers on a canvas.
func tilePixels(c layout.Canvas, tile int) int64 {
	return int64(min(c.Width, tile)) * int64(min(c.Height, tile))
}

// phaseInput is what the memory model needs besides the layout.
type phaseInput struct {
	l      *layout.Layout
	output layout.Canvas // final video canvas (>= the model canvas)
	model  Model
	knobs  Knobs
	steps  int
	layers int
	// anchorSources are the anchors' source pixel sizes (decoded before resizing).
	anchorSources []layout.Canvas
	loras         []LoRA
}

// phases computes every phase's peak, one function per phase; what a phase
// leaves for a later one (condition latents, Qwen's pixels) is passed on.
func phases(in phaseInput) []Phase {
	var out []Phase
	// A peak is the phase's own bytes: the process, the window and the
	// backend's contexts beside them are Machine.Budget's Reserve.
	add := func(p Phase) {
		p.PeakBytes = p.WeightsBytes + p.ScratchBytes + p.MediaBytes + p.CarriedBytes
		out = append(out, p)
	}
	add(Phase{Name: PhaseLoad, ScratchBytes: 64 << 20}) // tokenizer, shard headers, configs
	refs := referenceLoad(in)
	if refs.visual || refs.audio {
		add(refs.phase(in.model))
	}
	add(textPhase(in, refs))
	add(denoisePhase(in, refs))
	add(decodePhase(in))
	add(muxPhase(in))
	return out
}

// references is what reading and encoding the request's media holds.
type references struct {
	condLatents, qwenPixels, media, encScratch int64
	visual, audio                              bool
}

// referenceLoad sums the reference decode: media to canvas pixels,
// VAE-encoded to latents.
func referenceLoad(in phaseInput) references {
	l, d := in.l, in.model.Dims
	r := references{visual: len(in.anchorSources) > 0}
	for _, src := range in.anchorSources {
		r.media += pix(src)*4 + pix(l.Canvas)*3*f32
		r.condLatents += latentBytes(l.Canvas, 1, d.LatentCh)
		r.qwenPixels += pix(l.Canvas) * 3 * f32
		r.encScratch = max(r.encScratch, tilePixels(l.Canvas, vaeEncTile)*encCh*f32*2)
	}
	for _, ref := range l.Refs {
		switch {
		case ref.Kind == layout.RefImage:
			r.visual = true
			r.media += pix(ref.Source)*4 + pix(ref.Canvas)*3*f32
			r.condLatents += latentBytes(ref.Canvas, 1, d.LatentCh)
			r.qwenPixels += pix(ref.Canvas) * 3 * f32
			r.encScratch = max(r.encScratch, tilePixels(ref.Canvas, vaeEncTile)*encCh*f32*2)
		case ref.Kind.HasVideo():
			r.visual = true
			r.media += int64(ref.Frames)*pix(ref.Canvas)*3 + 17*pix(ref.Canvas)*3*f32
			r.condLatents += latentBytes(ref.Canvas, ref.LatentFrames, d.LatentCh)
			r.qwenPixels += int64(len(layout.QwenSamples(ref.Frames))) * pix(ref.Canvas) * 3 * f32
			r.encScratch = max(r.encScratch, encClip*tilePixels(ref.Canvas, vaeEncTile)*encCh*f32*2)
		}
		if ref.Kind.HasAudio() {
			r.audio = true
			samples := int64(layout.AudioSamples(ref.UsedSeconds))
			r.media += samples * 2 * f32
			r.condLatents += int64(2*d.AudioCh*ref.AudioLatents) * f32
			r.encScratch = max(r.encScratch, samples*2*64*f32*2)
		}
	}
	return r
}

// phase is the reference phase: the encoders the media needs, resident.
func (r references) phase(m Model) Phase {
	var weights int64
	if r.visual {
		weights += m.VAEEncoderBytes()
	}
	if r.audio {
		weights += m.AudioVAEBytes()
	}
	return Phase{Name: PhaseReference, WeightsBytes: weights, ScratchBytes: r.encScratch,
		MediaBytes: r.media + r.condLatents + r.qwenPixels, Residency: Resident}
}

// textPhase is the vision tower and the text encoder.
func textPhase(in phaseInput, refs references) Phase {
	l, m, d := in.l, in.model, in.model.Dims
	T := int64(l.Qwen.Tokens())
	var visionScratch, visionTokens int64
	for _, sp := range l.Qwen.Spans {
		if sp.Kind.IsVision() {
			visionScratch = max(visionScratch, 4*int64(sp.Canvas.Tokens())*d.visionPatchBytes())
			visionTokens += int64(sp.Tokens)
		}
	}
	textEmb := T * int64(d.QHidden) * f32
	te := Phase{Name: PhaseText, Residency: in.knobs.TextEncoder,
		ScratchBytes: max(visionScratch, d.QwenPrefillBytes(int(T))),
		// Vision embeddings and 3 deepstack features wait for the LM; the
		// pixels they came from are released first.
		MediaBytes:   max(refs.qwenPixels, 4*visionTokens*int64(d.QHidden)*f32) + textEmb,
		CarriedBytes: refs.condLatents,
	}
	if visionTokens > 0 {
		te.WeightsBytes = m.VisionBytes()
	}
	if in.knobs.TextEncoder == Streamed {
		te.WeightsBytes += streamSlots*m.QwenLayerBytes() + T*int64(float64(d.QHidden)*m.QwenBPP)
	} else {
		te.WeightsBytes += int64(d.QLayersUsed)*m.QwenLayerBytes() + m.QwenEmbedBytes()
	}
	return te
}

// denoisePhase is the DiT loop.
func denoisePhase(in phaseInput, refs references) Phase {
	l, m, d := in.l, in.model, in.model.Dims
	N, T := int64(l.Rows), int64(l.Qwen.Tokens())
	layers := int64(in.layers)
	tables := int64(in.steps+1) * 3 * layers * 6 * int64(d.Hidden) * f32
	// The refiner and condition projection run once on the text rows
	// before the loop and are released, so they never meet the blocks.
	refiner := int64(float64(int64(d.RefinerBlocks)*d.CoreBlockParams()+int64(d.TextDim*d.Hidden)) * m.DiTBPP)
	adapters, _ := loraCost(in.loras) // resident beside the blocks, streamed or not
	dn := Phase{Name: PhaseDenoise, Residency: in.knobs.DiT,
		WeightsBytes: m.DiTTrunkBytes() - refiner + tables + adapters,
		ScratchBytes: N * d.DiTRowBytes(),
		// x, velocity and two past velocities for reuse extrapolation.
		MediaBytes:   4 * (latentBytes(l.Canvas, l.LatentFrames, d.LatentCh) + int64(2*d.AudioCh*l.AudioLatents)*f32),
		CarriedBytes: refs.condLatents + T*int64(d.Hidden)*f32,
	}
	if in.knobs.DiT == Streamed {
		dn.WeightsBytes += max(refiner, 2*m.DiTBlockBytes())
	} else {
		dn.WeightsBytes += max(refiner, layers*m.DiTBlockBytes())
	}
	return dn
}

// VideoDecodeBytes is the video VAE decoder's activation scratch for one
// call on canvas c: a 7-latent chunk of one 256-px tile (the whole canvas
// when smaller) of 16-px cells plus the 5 suffix tokens, whose head writes
// 4 RGB frames of its cell per token (arch.DecoderCallBytes). The decode
// phase's scratch is the larger of this and the audio decoder's;
// `bench --vae` measures it.
func (d Dims) VideoDecodeBytes(c layout.Canvas) int64 {
	const cell, frames = 16, 4
	tok := vaeChunk*tilePixels(c, vaeTile)/(cell*cell) + 5
	return arch.DecoderCallBytes(d.DecDim, 3*frames*cell*cell, int(tok))
}

// decodePhase is the VAE decode, then the audio decode, at the model canvas.
func decodePhase(in phaseInput) Phase {
	l, m, d := in.l, in.model, in.model.Dims
	final := latentBytes(l.Canvas, l.LatentFrames, d.LatentCh) + int64(2*d.AudioCh*l.AudioLatents)*f32
	vd := Phase{Name: PhaseDecode, Residency: in.knobs.VAEDecoder,
		WeightsBytes: m.AudioVAEBytes(),
		ScratchBytes: max(d.VideoDecodeBytes(l.Canvas), int64(l.AudioLatents)*audioDecodePerLatent),
		MediaBytes:   int64(l.Frames) * pix(l.Canvas) * 3,
		CarriedBytes: final,
	}
	if in.knobs.VAEDecoder == Streamed {
		vd.WeightsBytes += streamSlots * m.VAEDecoderBytes() / int64(d.DecBlocks)
	} else {
		vd.WeightsBytes += m.VAEDecoderBytes()
	}
	return vd
}

// muxPhase streams the decoded frames to the encoder, upscaling one frame
// at a time when rendering smaller.
func muxPhase(in phaseInput) Phase {
	l := in.l
	frames := int64(l.Frames)*pix(l.Canvas)*3 + pix(in.output)*3
	pcm := int64(layout.AudioSamples(float64(l.Frames)/layout.FPS)) * 2 * f32
	return Phase{Name: PhaseMux, ScratchBytes: muxBaseBytes + muxPerPixel*pix(in.output), MediaBytes: frames + pcm}
}

// peakOf is the largest phase peak.
func peakOf(ps []Phase) (int64, string) {
	var p int64
	var name string
	for _, ph := range ps {
		if ph.PeakBytes > p {
			p, name = ph.PeakBytes, ph.Name
		}
	}
	return p, name
}

// excessOf sums how far each phase is over budget.
func excessOf(ps []Phase, budget int64) int64 {
	var e int64
	for _, ph := range ps {
		e += max(0, ph.PeakBytes-budget)
	}
	return e
}
