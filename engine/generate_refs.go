package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/engine/vae"
)

// prepared is one anchor or reference after the references phase: what the
// vision tower sees and what the DiT is conditioned on.
type prepared struct {
	kind   layout.RefKind // RefImage for anchors
	canvas layout.Canvas
	// still is an image's pixels [3][H][W] in [0, 1]; samples are a clip's
	// frames at the layout's 2-fps indices, same layout.
	still   []float32
	samples map[int][]float32
	video   *vae.Latent      // visual condition latent (nil for audio)
	audio   *vae.AudioLatent // audio condition latent (nil for pictures)
}

// pending is an input still to be VAE-encoded.
type pending struct {
	p     *prepared
	clip  *vae.Clip // pixels in [-1, 1]
	sound *vae.Audio
	key   string
	index int // in generation.inputs, for progress
}

// references decodes every anchor and reference through the MediaReader at
// the plan's canvases and lengths, then VAE-encodes them: the video encoder
// for all pictures, then (after it is released) the audio encoder for all
// sound. Inputs unchanged since an earlier generation come from the cache.
func (g *generation) references(ctx context.Context) error {
	l := g.plan.Layout
	var todo []pending
	prog := g.newRefProgress(inputWeights(g.plan))
	add := func(i int, key string, decode func() (pending, error)) error {
		if v, ok := g.e.cache.get(key); ok {
			g.inputs[i] = v.(*prepared)
			g.cached = append(g.cached, fmt.Sprintf("input %d", i+1))
			prog.advance(i, "cached")
			prog.advance(i, "cached")
			return nil
		}
		pd, err := decode()
		if err != nil {
			return err
		}
		pd.key, pd.index = key, i
		g.inputs[i] = pd.p
		todo = append(todo, pd)
		prog.advance(i, "read")
		return nil
	}
	switch l.Task {
	case layout.FL2VA:
		g.inputs = make([]*prepared, 2)
		// The request's first keyframe is the geometry anchor and is
		// stretched, a sole last frame included; only a last frame that
		// follows a first one is cover-cropped (SGLang canvas.py,
		// minimax_h3_prepared_keyframes; ComfyUI always covers the last).
		lastFit := FitStretch
		if g.plan.Request.First != "" {
			lastFit = FitCover
		}
		for i, a := range []struct {
			path string
			fit  Fit
		}{{g.plan.Request.First, FitStretch}, {g.plan.Request.Last, lastFit}} {
			if a.path == "" {
				continue
			}
			key := fileKey(a.path, "anchor", l.Canvas, a.fit)
			if err := add(i, key, func() (pending, error) { return g.decodeImage(ctx, a.path, l.Canvas, a.fit) }); err != nil {
				return err
			}
		}
	case layout.Ref2VA:
		g.inputs = make([]*prepared, len(l.Refs))
		for i := range l.Refs {
			rl, ref := &l.Refs[i], g.plan.Request.Refs[i]
			key := refKey(ref, rl)
			if err := add(i, key, func() (pending, error) { return g.decodeRef(ctx, ref, rl) }); err != nil {
				return err
			}
		}
	}
	if len(todo) == 0 {
		return nil
	}
	if err := g.encodePictures(ctx, todo, prog); err != nil {
		return err
	}
	if err := g.encodeSound(ctx, todo, prog); err != nil {
		return err
	}
	for _, pd := range todo {
		g.e.cache.put(pd.key, pd.p)
	}
	return nil
}

// inputWeights are the pixels each anchor or reference decodes and
// encodes, the weights of the references phase's progress; a sound-only
// reference weighs as a small picture.
func inputWeights(p *plan.Plan) []float64 {
	l := p.Layout
	if l.Task == layout.FL2VA {
		return []float64{1, 1}
	}
	w := make([]float64, len(l.Refs))
	for i, r := range l.Refs {
		w[i] = float64(max(r.Canvas.Width*r.Canvas.Height, 64*64) * max(r.Frames, 1))
	}
	return w
}

// refKey is a reference's cache key: its file and how the layout uses it.
func refKey(ref plan.Reference, rl *layout.RefLayout) string {
	return fileKey(ref.Path, ref.AudioPath, rl.Kind, rl.Canvas, rl.Frames, rl.VAEFrames, rl.UsedSeconds)
}

// fileKey identifies an input by its file's identity (absolute path, size,
// modification time) and how it is used; "" (not cacheable) when the file
// cannot be stated, so a vanished file is reported by the decoder.
func fileKey(path string, use ...any) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return ""
	}
	st, err := os.Stat(abs)
	if err != nil {
		return ""
	}
	return fmt.Sprint("ref|", abs, "|", st.Size(), "|", st.ModTime().UnixNano(), "|", use)
}

func (g *generation) decodeImage(ctx context.Context, path string, c layout.Canvas, fit Fit) (pending, error) {
	px, err := g.req.Media.Image(ctx, path, c.Width, c.Height, fit)
	if err != nil {
		return pending{}, err
	}
	if px.Width != c.Width || px.Height != c.Height || len(px.RGB) != 3*c.Width*c.Height {
		return pending{}, fmt.Errorf("%s decoded to %dx%d, want %s", path, px.Width, px.Height, c)
	}
	p := &prepared{kind: layout.RefImage, canvas: c, still: planar(px, 1.0/255, 0)}
	return pending{p: p, clip: &vae.Clip{T: 1, H: c.Height, W: c.Width, Data: planar(px, 2.0/255, -1)}}, nil
}

func (g *generation) decodeRef(ctx context.Context, ref plan.Reference, rl *layout.RefLayout) (pending, error) {
	var pd pending
	var err error
	switch rl.Kind {
	case layout.RefImage:
		return g.decodeImage(ctx, ref.Path, rl.Canvas, FitStretch)
	case layout.RefVideo, layout.RefVideoAudio:
		if pd, err = g.decodeClip(ctx, ref.Path, rl); err != nil {
			return pd, err
		}
	default:
		pd.p = &prepared{kind: rl.Kind, canvas: rl.Canvas}
	}
	if rl.Kind.HasAudio() {
		src := ref.Path
		if ref.AudioPath != "" {
			src = ref.AudioPath
		}
		a, err := g.req.Media.Audio(ctx, src, rl.UsedSeconds)
		if err != nil {
			return pd, err
		}
		pd.sound = stereoPlanar(a, rl.AudioSamples)
	}
	return pd, nil
}

// decodeClip reads the planned F' frames of a clip on its canvas: the
// 2-fps samples of all of them for the vision tower, the first VAEFrames
// for the VAE. A clip that ends early (the container over-stated its
// length) repeats its last frame.
func (g *generation) decodeClip(ctx context.Context, path string, rl *layout.RefLayout) (pending, error) {
	c, n := rl.Canvas, rl.Frames
	if rl.VAEFrames < 1 || rl.VAEFrames > n {
		return pending{}, fmt.Errorf("%s: the plan encodes %d of its %d frames", path, rl.VAEFrames, n)
	}
	plane := 3 * c.Width * c.Height
	frames := make([][]float32, 0, n)
	want := map[int]bool{}
	for _, i := range layout.QwenSamples(n) {
		want[i] = true
	}
	p := &prepared{kind: rl.Kind, canvas: c, samples: map[int][]float32{}}
	got, err := g.req.Media.Video(ctx, path, c.Width, c.Height, n, func(i int, px Pixels) error {
		if px.Width != c.Width || px.Height != c.Height || len(px.RGB) != plane {
			return fmt.Errorf("%s frame %d decoded to %dx%d, want %s", path, i, px.Width, px.Height, c)
		}
		frames = append(frames, planar(px, 2.0/255, -1))
		if want[i] {
			p.samples[i] = planar(px, 1.0/255, 0)
		}
		return nil
	})
	if err != nil {
		return pending{}, err
	}
	if got == 0 || len(frames) == 0 {
		return pending{}, fmt.Errorf("%s has no frames", path)
	}
	for len(frames) < n {
		frames = append(frames, frames[len(frames)-1])
	}
	for i := range want {
		if p.samples[i] == nil { // past the real end: the repeated last frame
			last := frames[len(frames)-1]
			s := make([]float32, len(last))
			for j, v := range last {
				s[j] = (v + 1) / 2
			}
			p.samples[i] = s
		}
	}
	frames = frames[:rl.VAEFrames]
	data := make([]float32, 0, len(frames)*plane)
	for ch := 0; ch < 3; ch++ { // [T][3][H][W] -> [3][T][H][W]
		for _, f := range frames {
			data = append(data, f[ch*plane/3:(ch+1)*plane/3]...)
		}
	}
	return pending{p: p, clip: &vae.Clip{T: len(frames), H: c.Height, W: c.Width, Data: data}}, nil
}

// planar converts packed RGB to [3][H][W] float32 as v*scale+shift.
func planar(px Pixels, scale, shift float32) []float32 {
	n := px.Width * px.Height
	out := make([]float32, 3*n)
	for i := 0; i < n; i++ {
		for ch := 0; ch < 3; ch++ {
			out[ch*n+i] = float32(px.RGB[3*i+ch])*scale + shift
		}
	}
	return out
}

// stereoPlanar turns interleaved stereo into the VAE's [2][n], cut or
// zero-padded to exactly n samples (the plan's used length).
func stereoPlanar(a Audio, n int) *vae.Audio {
	out := &vae.Audio{Samples: n, Data: make([]float32, 2*n)}
	for i := 0; i < n && i < a.Frames(); i++ {
		out.Data[i] = a.Samples[2*i]
		out.Data[n+i] = a.Samples[2*i+1]
	}
	return out
}

// encodePictures runs the video VAE encoder over every pending picture
// and clip, then releases it.
func (g *generation) encodePictures(ctx context.Context, todo []pending, prog *refProgress) error {
	need := false
	for _, pd := range todo {
		need = need || pd.clip != nil
	}
	if !need {
		return nil
	}
	src, cfg, err := g.videoVAE()
	if err != nil {
		return err
	}
	defer src.Close()
	enc, err := vae.LoadVideoEncoder(g.e.backend, src, cfg)
	if err != nil {
		return err
	}
	defer enc.Close()
	enc.HalfLatent = true // the official encode's fp16 latent
	defer g.timePart("video-vae-encode", time.Now())
	// The clips' share is timed on its own: the planner prices clips at
	// their own rate (plan.TimeReferenceClips).
	var clips time.Duration
	defer func() {
		if clips > 0 {
			g.parts = append(g.parts, PhaseTime{Phase: Phase(plan.TimeReferenceClips), Elapsed: clips})
		}
	}()
	for _, pd := range todo {
		if pd.clip == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		var lat vae.Latent
		if pd.clip.T == 1 {
			lat, err = enc.EncodeImage(ctx, *pd.clip)
		} else {
			t0 := time.Now()
			lat, err = enc.EncodeVideo(ctx, *pd.clip)
			clips += time.Since(t0)
		}
		if err != nil {
			return err
		}
		pd.p.video = &lat
		prog.advance(pd.index, "video VAE encode")
	}
	return nil
}

// encodeSound runs the audio VAE encoder over every pending soundtrack.
func (g *generation) encodeSound(ctx context.Context, todo []pending, prog *refProgress) error {
	need := false
	for _, pd := range todo {
		need = need || pd.sound != nil
	}
	if !need {
		return nil
	}
	src, cfg, err := g.audioVAE()
	if err != nil {
		return err
	}
	defer src.Close()
	enc, err := vae.LoadAudio(g.e.backend, src, cfg, vae.AudioEncoderPart, vae.AudioOptions{Precision: g.e.precision()})
	if err != nil {
		return err
	}
	defer enc.Close()
	defer g.timePart("audio-vae-encode", time.Now())
	for _, pd := range todo {
		if pd.sound == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		lat, err := enc.Encode(ctx, *pd.sound)
		if err != nil {
			return err
		}
		pd.p.audio = &lat
		if pd.clip == nil {
			prog.advance(pd.index, "audio VAE encode")
		}
	}
	return nil
}
