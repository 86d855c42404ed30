package dit

import (
	"testing"

	"h3studio/engine/layout"
)

// Planned layouts (engine/layout) of all three tasks become sequences whose
// row counts and text tags line up with what the DiT embeds.
func TestSequenceFromPlannedLayouts(t *testing.T) {
	b := cpuBackend(t)
	m := loadTiny(t, b, false, Options{Precision: exactKV})
	c := layout.Canvas{Width: 128, Height: 96}
	for _, spec := range []layout.Spec{
		{Canvas: c, Frames: 22, PromptTokens: 9},
		{Canvas: c, Frames: 22, PromptTokens: 9, First: true, Last: true},
		{Canvas: c, Frames: 56, PromptTokens: 9, Refs: []layout.Ref{
			{Kind: layout.RefImage, Name: "a.png", Source: layout.Canvas{Width: 200, Height: 120}},
			{Kind: layout.RefVideoAudio, Name: "b.mp4", Source: layout.Canvas{Width: 160, Height: 96}, SourceFrames: 60, AudioSeconds: 2.5},
			{Kind: layout.RefAudio, Name: "c.wav", AudioSeconds: 2},
		}},
	} {
		l, err := layout.Build(spec)
		if err != nil {
			t.Fatalf("%v: %v", spec.Task(), err)
		}
		s, err := m.SequenceFor(l)
		if err != nil {
			t.Fatalf("%v: %v", spec.Task(), err)
		}
		rc := l.Counts()
		vis := 0
		for _, m := range l.Qwen.Modalities() {
			if m == layout.ModalityVideo {
				vis++
			}
		}
		t.Logf("%v: %d rows (text %d with %d vision tokens, video %d, audio %d, conditions %d)", spec.Task(), s.Rows(), rc.Text, vis, s.VideoRows(), s.AudioRows(), rc.Conditions+rc.References)
		if s.Rows() != l.Rows || s.TargetVideoRows() != rc.Video || s.TargetAudioRows() != rc.Audio {
			t.Errorf("%v: sequence %d/%d/%d rows, layout %d/%d/%d", spec.Task(), s.Rows(), s.TargetVideoRows(), s.TargetAudioRows(), l.Rows, rc.Video, rc.Audio)
		}
		if s.VideoRows()+s.AudioRows()+rc.Text != l.Rows {
			t.Errorf("%v: embeddings do not cover the rows", spec.Task())
		}
		if spec.Task() != layout.T2VA && vis == 0 {
			t.Errorf("%v: no vision-span text rows (modality 0)", spec.Task())
		}
		// one forward on zeros at t=0.5 runs end to end
		cfg := m.Cfg
		if err := m.PrepareAdaLN([]Timesteps{{Video: 0.5, Audio: 0.5}}); err != nil {
			t.Fatal(err)
		}
		out, err := m.Forward(s, Inputs{Text: make([]float32, rc.Text*cfg.Hidden), Video: make([]float32, s.VideoRows()*cfg.VideoPatchDim()),
			Audio: make([]float32, s.AudioRows()*cfg.AudioChannels), T: Timesteps{Video: 0.5, Audio: 0.5}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Video) != rc.Video*cfg.VideoPatchDim() || len(out.Audio) != rc.Audio*cfg.AudioChannels {
			t.Errorf("%v: outputs %d/%d", spec.Task(), len(out.Video), len(out.Audio))
		}
	}
}
