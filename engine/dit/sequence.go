package dit

import (
	"fmt"
	"math"

	"h3studio/engine/layout"
)

// Sequence is one generation's packed row structure, fixed for all steps:
// the planner's segments (engine/layout), the modality of each text row,
// and what follows from them (row order, RoPE tables).
type Sequence struct {
	Segments []layout.Segment
	// TextTags is the AdaLN modality of each text row (Qwen vision spans
	// are ModalityVideo); nil means every text row is ModalityText.
	TextTags []layout.Modality

	rows                   int
	text, video, audio     int // rows of each embedding kind
	targetVideo, targetAud layout.Segment
	order                  []int32    // packed row -> row of [text | video rows | audio rows]
	cos, sin               []float32  // [rows][rope_dims/2]
	inv                    []float32  // the model's inv_freq
	pooled                 *pooledSeq // token reduction's grid, made on first use
}

// NewSequence checks the segments ([text | conditions | target audio |
// target video], contiguous) and precomputes the row order and the RoPE
// tables from the checkpoint's inv_freq.
func (m *Model) NewSequence(segs []layout.Segment, textTags []layout.Modality) (*Sequence, error) {
	s := &Sequence{Segments: segs, TextTags: textTags}
	n := len(segs)
	if n < 3 || segs[0].Kind != layout.SegText || segs[n-2].Kind != layout.SegAudio || segs[n-1].Kind != layout.SegVideo {
		return nil, fmt.Errorf("dit: a sequence is [text | conditions | target audio | target video]; got %d segments", n)
	}
	for i, sg := range segs {
		if sg.Start != s.rows || sg.Rows <= 0 {
			return nil, fmt.Errorf("dit: segment %d (%s) starts at row %d with %d rows; segments must be contiguous and non-empty", i, sg.Kind, sg.Start, sg.Rows)
		}
		s.rows += sg.Rows
	}
	if textTags != nil && len(textTags) != segs[0].Rows {
		return nil, fmt.Errorf("dit: %d text tags for %d text rows", len(textTags), segs[0].Rows)
	}
	s.targetAud, s.targetVideo = segs[n-2], segs[n-1]
	for _, sg := range segs {
		switch sg.Modality {
		case layout.ModalityText:
			s.text += sg.Rows
		case layout.ModalityVideo:
			s.video += sg.Rows
		case layout.ModalityAudio:
			s.audio += sg.Rows
		}
	}
	if s.text != segs[0].Rows {
		return nil, fmt.Errorf("dit: only the first segment may be text")
	}
	s.order = make([]int32, 0, s.rows)
	vi, ai := s.text, s.text+s.video
	for _, sg := range segs {
		for r := 0; r < sg.Rows; r++ {
			switch sg.Modality {
			case layout.ModalityText:
				s.order = append(s.order, int32(r))
			case layout.ModalityVideo:
				s.order = append(s.order, int32(vi))
				vi++
			default:
				s.order = append(s.order, int32(ai))
				ai++
			}
		}
	}
	s.inv = m.invFreq
	var pos [][3]float64
	for i := range segs {
		pos = segs[i].AppendPositions(pos)
	}
	s.cos, s.sin = ropeTables(pos, m.invFreq)
	return s, nil
}

// Rows is the sequence length.
func (s *Sequence) Rows() int { return s.rows }

// VideoRows and AudioRows count all rows of each latent kind (conditions
// and references included), TargetVideoRows/TargetAudioRows the generated ones.
func (s *Sequence) VideoRows() int       { return s.video }
func (s *Sequence) AudioRows() int       { return s.audio }
func (s *Sequence) TargetVideoRows() int { return s.targetVideo.Rows }
func (s *Sequence) TargetAudioRows() int { return s.targetAud.Rows }

// ropeTables computes cos and sin of the angles [t·f, h·f, w·f] per row,
// with positions and products rounded to float32 as the reference does.
func ropeTables(pos [][3]float64, inv []float32) (cos, sin []float32) {
	f := len(inv)
	cos = make([]float32, 0, len(pos)*3*f)
	sin = make([]float32, 0, len(pos)*3*f)
	for _, p := range pos {
		for axis := 0; axis < 3; axis++ {
			x := float32(p[axis])
			for k := 0; k < f; k++ {
				a := float64(x * inv[k])
				cos = append(cos, float32(math.Cos(a)))
				sin = append(sin, float32(math.Sin(a)))
			}
		}
	}
	return cos, sin
}

// modIndex returns each row's (timestep, modality) pair for one forward.
func (s *Sequence) modIndex(at *adaTables, ts Timesteps) ([]int32, error) {
	idx := make([]int32, 0, s.rows)
	for _, sg := range s.Segments {
		t := ts.of(sg.Timestep)
		for r := 0; r < sg.Rows; r++ {
			tag := sg.Modality
			if sg.Kind == layout.SegText {
				tag = layout.ModalityText
				if s.TextTags != nil {
					tag = s.TextTags[r]
				}
			}
			p, ok := at.pairs[pairKey{t, tag}]
			if !ok {
				return nil, fmt.Errorf("dit: timestep %g (%s rows) was not prepared; call PrepareAdaLN with this step", t, sg.Kind)
			}
			idx = append(idx, int32(p))
		}
	}
	return idx, nil
}

// SequenceFor is NewSequence over a planned layout: its segments and the
// Qwen presentation's per-token modalities.
func (m *Model) SequenceFor(l *layout.Layout) (*Sequence, error) {
	return m.NewSequence(l.Segments, l.Qwen.Modalities())
}
