package dit

import (
	"context"
	"fmt"

	"h3studio/engine/layout"
	"h3studio/engine/sampler"
)

// ConditionRows patchifies a visual condition latent [c, t, h, w] and
// applies the release's noise augmentation, aug·clean + (1−aug)·noise
// (aug 0.999), with noise a latent of the same shape patchified alike: the
// official recipe noises the latent, where ComfyUI draws in row shape.
// aug ≥ 1 returns the clean rows (reference audio is pinned clean).
func ConditionRows(lat []float32, c, t, h, w int, noise []float32, aug float64) ([]float32, error) {
	rows, err := PatchifyVideo(lat, c, t, h, w)
	if err != nil || aug >= 1 {
		return rows, err
	}
	if len(noise) != len(lat) {
		return nil, fmt.Errorf("dit: %d noise values for a [%d, %d, %d, %d] condition", len(noise), c, t, h, w)
	}
	nr, err := PatchifyVideo(noise, c, t, h, w)
	if err != nil {
		return nil, err
	}
	a, b := float32(aug), float32(1-aug)
	for i := range rows {
		rows[i] = a*rows[i] + b*nr[i]
	}
	return rows, nil
}

// StepTimesteps lists the timesteps of every forward of a schedule, the
// argument PrepareAdaLN wants.
func StepTimesteps(s sampler.Schedule) []Timesteps {
	out := make([]Timesteps, s.Steps())
	for i := range out {
		out[i] = Timesteps{Video: sampler.Timestep(s.Video[i]), Audio: sampler.Timestep(s.Audio[i])}
	}
	return out
}

// Generation is one request's denoiser: the sequence, the refined text and
// the pinned condition rows stay fixed while the sampler moves the target
// latents. It implements sampler.Denoiser.
type Generation struct {
	m          *Model
	seq        *Sequence
	text       []float32
	condVideo  []float32 // visual condition rows, sequence order, augmented once
	condAudio  []float32 // reference audio rows, sequence order, clean
	c, t, h, w int       // target video latent [c, t, h, w]
	ta         int       // target audio latents per channel
}

// NewGeneration checks that the conditions and the target geometry fill
// the sequence exactly.
func (m *Model) NewGeneration(seq *Sequence, text, condVideo, condAudio []float32, video [4]int, audioT int) (*Generation, error) {
	cfg := m.Cfg
	g := &Generation{m: m, seq: seq, text: text, condVideo: condVideo, condAudio: condAudio,
		c: video[0], t: video[1], h: video[2], w: video[3], ta: audioT}
	switch {
	case g.c != cfg.LatentChannels:
		return nil, fmt.Errorf("dit: video latent has %d channels, the model %d", g.c, cfg.LatentChannels)
	case g.t*(g.h/2)*(g.w/2) != seq.TargetVideoRows():
		return nil, fmt.Errorf("dit: video latent %v makes %d rows, the sequence has %d", video, g.t*(g.h/2)*(g.w/2), seq.TargetVideoRows())
	case 2*audioT != seq.TargetAudioRows():
		return nil, fmt.Errorf("dit: %d audio latents make %d rows, the sequence has %d", audioT, 2*audioT, seq.TargetAudioRows())
	case len(condVideo) != (seq.VideoRows()-seq.TargetVideoRows())*cfg.VideoPatchDim():
		return nil, fmt.Errorf("dit: %d condition video values for %d condition rows", len(condVideo), seq.VideoRows()-seq.TargetVideoRows())
	case len(condAudio) != (seq.AudioRows()-seq.TargetAudioRows())*cfg.AudioChannels:
		return nil, fmt.Errorf("dit: %d reference audio values for %d reference rows", len(condAudio), seq.AudioRows()-seq.TargetAudioRows())
	}
	return g, nil
}

// Velocity runs one forward on the current target latents.
func (g *Generation) Velocity(ctx context.Context, s sampler.Step, video, audio []float32) ([]float32, []float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	vr, err := PatchifyVideo(video, g.c, g.t, g.h, g.w)
	if err != nil {
		return nil, nil, err
	}
	ar, err := PackAudio(audio, g.m.Cfg.AudioChannels, g.ta)
	if err != nil {
		return nil, nil, err
	}
	in := Inputs{
		Text:  g.text,
		Video: append(append(make([]float32, 0, len(g.condVideo)+len(vr)), g.condVideo...), vr...),
		Audio: append(append(make([]float32, 0, len(g.condAudio)+len(ar)), g.condAudio...), ar...),
		T:     Timesteps{Video: sampler.Timestep(s.SigmaVideo), Audio: sampler.Timestep(s.SigmaAudio)},
		Step:  s.Index,
		Final: s.Index == s.Total-1,
	}
	out, err := g.m.Forward(g.seq, in)
	if err != nil {
		return nil, nil, err
	}
	vv, err := UnpatchifyVideo(out.Video, g.c, g.t, g.h, g.w)
	if err != nil {
		return nil, nil, err
	}
	va, err := UnpackAudio(out.Audio, g.m.Cfg.AudioChannels, g.ta)
	return vv, va, err
}

// PinnedRows builds a generation's condition rows in sequence order from
// the VAE latents of its conditions: video latents [24, T, h, w] for each
// anchor, reference image and reference clip (in segment order), audio
// latents [32, 2, Ta] for each reference audio segment. Visual conditions
// get the release's 0.999/0.001 noise augmentation with the official
// draws (SGLang's minimax_h3_imgvid_cond_noise_aug_rows): for each
// condition a fresh draw of [24, targetT + n, h, w] values (n visual
// conditions, draw(k) k normals from the request seed), of which the
// condition's first T latent frames are used. Reference audio stays clean.
func (m *Model) PinnedRows(s *Sequence, video, audio [][]float32, targetT int, draw func(n int) []float32) (condVideo, condAudio []float32, err error) {
	cfg := m.Cfg
	vi, ai := 0, 0
	visual := 0
	for _, sg := range s.Segments[1 : len(s.Segments)-2] {
		if sg.Modality == layout.ModalityVideo {
			visual++
		}
	}
	for i, sg := range s.Segments[1 : len(s.Segments)-2] {
		switch sg.Modality {
		case layout.ModalityVideo:
			if vi >= len(video) {
				return nil, nil, fmt.Errorf("dit: condition %d (%s) has no video latent; %d given", i+1, sg.Kind, len(video))
			}
			h, w := 2*sg.GridH, 2*sg.GridW
			n := cfg.LatentChannels * sg.LatentT * h * w
			if len(video[vi]) != n {
				return nil, nil, fmt.Errorf("dit: condition %d (%s) needs a [%d, %d, %d, %d] latent, got %d values", i+1, sg.Kind, cfg.LatentChannels, sg.LatentT, h, w, len(video[vi]))
			}
			noise := latentPrefix(draw(cfg.LatentChannels*(targetT+visual)*h*w), cfg.LatentChannels, targetT+visual, sg.LatentT, h*w)
			rows, err := ConditionRows(video[vi], cfg.LatentChannels, sg.LatentT, h, w, noise, VisualCondTimestep)
			if err != nil {
				return nil, nil, err
			}
			condVideo = append(condVideo, rows...)
			vi++
		case layout.ModalityAudio:
			if ai >= len(audio) {
				return nil, nil, fmt.Errorf("dit: condition %d (%s) has no audio latent; %d given", i+1, sg.Kind, len(audio))
			}
			rows, err := PackAudio(audio[ai], cfg.AudioChannels, sg.AudioT)
			if err != nil {
				return nil, nil, fmt.Errorf("dit: condition %d (%s): %w", i+1, sg.Kind, err)
			}
			condAudio = append(condAudio, rows...)
			ai++
		}
	}
	if vi != len(video) || ai != len(audio) {
		return nil, nil, fmt.Errorf("dit: %d video and %d audio latents given for %d and %d conditions", len(video), len(audio), vi, ai)
	}
	return condVideo, condAudio, nil
}

// latentPrefix keeps the first t frames of each channel of a [c, full, hw]
// draw.
func latentPrefix(d []float32, c, full, t, hw int) []float32 {
	out := make([]float32, 0, c*t*hw)
	for ch := 0; ch < c; ch++ {
		out = append(out, d[ch*full*hw:ch*full*hw+t*hw]...)
	}
	return out
}
