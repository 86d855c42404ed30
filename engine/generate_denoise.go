package engine

import (
	"cmp"
	"context"
	"fmt"
	"image"
	"time"

	"h3studio/engine/dit"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/engine/sampler"
	"h3studio/engine/vae"
	"h3studio/engine/weights"
)

// Noise, as the official pipeline draws it: every tensor from a CPU
// generator freshly seeded with the request seed (SGLang's latent
// preparation and condition_noise.py). The target video is one [C, T, H, W]
// draw; the target audio one draw of its 2·Ta rows of C values; each visual
// condition the prefix (its own latent frames) of a [C, T + n, h, w] draw,
// n being the number of visual conditions.

// previewFrameOf picks the previewed latent frame, T/previewFrameOf: the
// middle of the clip, where motion has started.
const previewFrameOf = 2

// denoise loads the DiT, refines the text rows, bakes the AdaLN tables for
// the run's schedule, pins the condition rows and walks the sampler from
// pure noise to the target latents; then it releases the DiT.
func (g *generation) denoise(ctx context.Context) error {
	comp, src, err := g.component(weights.Transformer)
	if err != nil {
		return err
	}
	defer src.Close()
	m, err := g.loadDiT(comp, src)
	if err != nil {
		return err
	}
	defer m.Close()
	closeLoRAs, err := g.applyLoRAs(m) // before the AdaLN tables: they fold the adapters in
	if err != nil {
		return err
	}
	defer closeLoRAs()
	sched, err := g.schedule()
	if err != nil {
		return err
	}
	if err := m.PrepareAdaLN(dit.StepTimesteps(sched)); err != nil {
		return err
	}
	if err := g.speedPolicies(m); err != nil {
		return err
	}
	gen, err := g.newGeneration(m)
	if err != nil {
		return err
	}
	c, lt, lh, lw := g.latent[0], g.latent[1], g.latent[2], g.latent[3]
	seed := uint64(g.req.Seed)
	g.video = g.e.noise(seed, c*lt*lh*lw)
	ca, ta := m.Cfg.AudioChannels, g.text.layout.AudioLatents
	if g.audio, err = dit.UnpackAudio(g.e.noise(seed, 2*ta*ca), ca, ta); err != nil {
		return err
	}
	g.forward = plan.Forwards(sched.Steps(), max(1, g.plan.Request.Reuse))
	t0 := time.Now()
	err = sampler.Run(ctx, sampler.Config{Schedule: sched, Reuse: sampler.ReuseConfig{Every: g.plan.Request.Reuse},
		Preview: func(step, total int, video []float32) {
			g.tap("step.video", step-1, video)
			g.tap("step.audio", step-1, g.audio)
			g.stepEvent(step, total, time.Since(t0), video)
		}},
		gen, g.video, g.audio)
	if err == nil {
		g.tap("final.video", -1, g.video)
		g.tap("final.audio", -1, g.audio)
	}
	return err
}

// loadDiT loads the transformer with its parsed config and the plan's
// residency.
func (g *generation) loadDiT(comp *weights.Component, src weights.Source) (*dit.Model, error) {
	cfg := g.model().DiT
	return dit.Load(g.e.backend, src, cfg, dit.Options{QKV: comp.QKV, Residency: g.plan.Residency.DiT, Precision: g.e.precision()})
}

// newGeneration builds the run's sequence, refined text and pinned
// condition rows, and sets the target latent's shape.
func (g *generation) newGeneration(m *dit.Model) (*dit.Generation, error) {
	lay := g.text.layout
	seq, err := m.NewSequence(lay.Segments, g.text.out.Tags)
	if err != nil {
		return nil, err
	}
	text, err := m.EncodeText(g.text.out.Hidden, g.text.out.Tokens)
	if err != nil {
		return nil, err
	}
	condVideo, condAudio, err := g.conditionRows(m, seq, lay)
	if err != nil {
		return nil, err
	}
	g.tap("cond.video_rows", -1, condVideo)
	g.tap("cond.audio_rows", -1, condAudio)
	g.latent = [4]int{m.Cfg.LatentChannels, lay.LatentFrames, lay.Canvas.LatentH(), lay.Canvas.LatentW()}
	return m.NewGeneration(seq, text, condVideo, condAudio, g.latent, lay.AudioLatents)
}

// speedPolicies applies the request's DiT-side speed options: layer
// thinning (ranked by the gates of the tables just prepared), core reuse
// and token reduction.
func (g *generation) speedPolicies(m *dit.Model) error {
	if g.plan.Request.Layers > 0 && g.plan.Request.Layers < m.Cfg.Layers {
		active, err := sampler.ThinningConfig{Keep: g.plan.Request.Layers}.Active(m.GateScores())
		if err != nil {
			return err
		}
		if err := m.SetActive(active); err != nil {
			return err
		}
	}
	if err := m.SetCoreReuse(dit.CoreReuseConfig{Every: g.plan.Request.CoreReuse}); err != nil {
		return err
	}
	if !g.plan.Request.TokenReduction {
		return m.SetTokenReduction(nil)
	}
	tr := tokenReduction(m.Cfg.Layers)
	return m.SetTokenReduction(&tr)
}

// tokenReduction is h3.c's token-reduction stretch for a DiT of n blocks:
// its own numbers for the release's 50, the same fractions of the depth
// otherwise (deviation: h3.c only defines the 50-block setting).
func tokenReduction(n int) dit.TokenReductionConfig {
	tr := dit.H3CTokenReduction()
	const release = 50
	if n == release {
		return tr
	}
	begin := tr.Begin * n / release
	end := max(begin+1, tr.End*n/release)
	return dit.TokenReductionConfig{Begin: begin, End: end, EarlySteps: tr.EarlySteps,
		EarlyEnd: min(n, max(end, tr.EarlyEnd*n/release)), Scale: tr.Scale}
}

// schedule is the run's sigma ladder, with the request's shifts when it
// sets them, else the partition's when its model_index.json names them.
func (g *generation) schedule() (sampler.Schedule, error) {
	vs, as := sampler.DefaultVideoShift, sampler.DefaultAudioShift
	if s, ok := g.part.SigmaShift["video"]; ok && s > 0 {
		vs = s
	}
	if s, ok := g.part.SigmaShift["audio"]; ok && s > 0 {
		as = s
	}
	r := g.plan.Request // its own shifts win (a Turbo adapter's)
	vs, as = cmp.Or(r.VideoShift, vs), cmp.Or(r.AudioShift, as)
	return sampler.NewSchedule(g.plan.Request.Steps, vs, as)
}

// stepEvent reports one finished denoise step with an ETA from the mean
// step time so far, and the preview frame when asked for.
func (g *generation) stepEvent(step, total int, el time.Duration, video []float32) {
	ev := Event{Phase: PhaseDenoise, Step: step, Total: total, Elapsed: el}
	ev.ETA = el / time.Duration(step) * time.Duration(total-step)
	if g.req.Preview {
		c, t, h, w := g.latent[0], g.latent[1], g.latent[2], g.latent[3]
		var img *image.RGBA
		var err error
		if m := g.req.PreviewMap; m != nil {
			img, err = m.Image(video, c, t, h, w, t/previewFrameOf)
		} else {
			img, err = sampler.PreviewImage(video, c, t, h, w, t/previewFrameOf)
		}
		if err != nil {
			g.e.log.Warn("engine: preview", "err", err)
		} else {
			ev.Preview = img
		}
	}
	g.sink(ev)
}

// conditionRows checks every condition's latent against its segment and
// has the DiT pin them (dit.PinnedRows: the official augmentation, drawn
// from the request seed).
func (g *generation) conditionRows(m *dit.Model, seq *dit.Sequence, lay *layout.Layout) (video, audio []float32, err error) {
	cfg := m.Cfg
	var vids, auds [][]float32
	for _, s := range lay.Segments {
		switch s.Kind {
		case layout.SegAnchor, layout.SegRefImage, layout.SegRefVideo:
			in, err := g.input(s)
			if err != nil {
				return nil, nil, err
			}
			z := in.video
			if z == nil || z.T != s.LatentT || z.H != s.Canvas.LatentH() || z.W != s.Canvas.LatentW() || z.C != cfg.LatentChannels {
				return nil, nil, fmt.Errorf("%s segment of input %d: latent %s, want %d x %d x %d", s.Kind, s.Ref+1, latentShape(z), s.LatentT, s.Canvas.LatentH(), s.Canvas.LatentW())
			}
			vids = append(vids, z.Data)
		case layout.SegRefAudio:
			in, err := g.input(s)
			if err != nil {
				return nil, nil, err
			}
			z := in.audio
			if z == nil || z.T != s.AudioT || z.C != cfg.AudioChannels {
				return nil, nil, fmt.Errorf("audio segment of input %d: latent of %v steps, want %d", s.Ref+1, audioSteps(z), s.AudioT)
			}
			auds = append(auds, z.Data)
		}
	}
	seed := uint64(g.req.Seed)
	return m.PinnedRows(seq, vids, auds, lay.LatentFrames, func(n int) []float32 { return g.e.noise(seed, n) })
}

func (g *generation) input(s layout.Segment) (*prepared, error) {
	if s.Ref < 0 || s.Ref >= len(g.inputs) || g.inputs[s.Ref] == nil {
		return nil, fmt.Errorf("%s segment names input %d, which was not prepared", s.Kind, s.Ref+1)
	}
	return g.inputs[s.Ref], nil
}

func latentShape(z *vae.Latent) string {
	if z == nil {
		return "none"
	}
	return fmt.Sprintf("%d x %d x %d x %d", z.C, z.T, z.H, z.W)
}

func audioSteps(z *vae.AudioLatent) any {
	if z == nil {
		return "no"
	}
	return z.T
}
