package layout

import (
	"fmt"
	"math"
)

// Modality is a row's AdaLN modulation tag: modulation row = timestep*3 + tag.
type Modality int

const (
	ModalityVideo Modality = 0 // target video, visual conditions, Qwen vision spans
	ModalityText  Modality = 1
	ModalityAudio Modality = 2 // target and reference audio
)

// TimestepRole says which of the (at most four) timesteps a row uses.
type TimestepRole int

const (
	TimestepVideo      TimestepRole = iota // target video, and text rows
	TimestepAudio                          // target audio
	TimestepVisualCond                     // anchors, reference images and clips: 0.999
	TimestepAudioCond                      // reference audio: 1.0
)

var roleNames = [...]string{"video", "audio", "visual-condition", "audio-condition"}

func (r TimestepRole) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("TimestepRole(%d)", int(r))
}

// SegmentKind is a block of consecutive DiT rows.
type SegmentKind int

const (
	SegText     SegmentKind = iota // Qwen output rows (tags vary; see Presentation.Modalities)
	SegAnchor                      // an FL2VA first/last frame condition
	SegRefImage                    // a reference image
	SegRefVideo                    // a reference clip's video latents
	SegRefAudio                    // a reference audio clip or a clip's soundtrack
	SegAudio                       // target audio (left rows, then right rows)
	SegVideo                       // target video
)

var segNames = [...]string{"text", "anchor", "ref-image", "ref-video", "ref-audio", "audio", "video"}

func (k SegmentKind) String() string {
	if int(k) < len(segNames) {
		return segNames[k]
	}
	return fmt.Sprintf("SegmentKind(%d)", int(k))
}

// Segment is a run of rows with one role and a closed-form position rule.
// The whole DiT sequence is [text | conditions/references | audio | video].
type Segment struct {
	Kind     SegmentKind
	Ref      int // reference index (Ref2VA) or anchor (0 first, 1 last); -1 otherwise
	Start    int
	Rows     int
	Timestep TimestepRole
	Modality Modality // for SegText the per-row tags come from the presentation

	// Position rule. Video-like segments: latent frame k is at time
	// T0 + SpanSum(k), over a GridH x GridW spatial grid (rows t-major,
	// then h, then w). Audio segments: AudioT left rows at (T0+j, 0, WLow),
	// then AudioT right rows at (T0+j, 0, WHigh). Anchors have LatentT 1.
	T0           float64
	LatentT      int
	Canvas       Canvas // the pixel canvas whose grid the rows use
	GridH, GridW int
	AudioT       int
	WLow, WHigh  float64
	// Pinned rows are written once and never updated by the sampler.
	Pinned bool
}

// End is one past the segment's last row.
func (s *Segment) End() int { return s.Start + s.Rows }

// spatialAxis is numpy linspace(endpoint=False) of the centred, area-
// normalised grid: every canvas spans a box of area 32^2 around (16, 16)
// with the canvas's aspect ratio.
func spatialAxis(n, latent int, s float64) func(i int) float64 {
	ratio := float64(latent) / s
	return func(i int) float64 {
		return 32 * ((1-ratio)/2 + float64(i)*ratio/float64(n))
	}
}

func grid(c Canvas) (nh, nw int, hAt, wAt func(int) float64) {
	lh, lw := c.LatentH(), c.LatentW()
	s := math.Sqrt(float64(lh) * float64(lw))
	nh, nw = lh/2, lw/2
	return nh, nw, spatialAxis(nh, lh, s), spatialAxis(nw, lw, s)
}

// Position is row i's RoPE (t, h, w) within the segment, in float64 as the
// references compute it (cast to float32 before cos/sin).
func (s *Segment) Position(i int) [3]float64 {
	switch s.Kind {
	case SegText:
		return [3]float64{float64(i), 0, 0}
	case SegAudio, SegRefAudio:
		w := s.WLow
		if i >= s.AudioT {
			i -= s.AudioT
			w = s.WHigh
		}
		return [3]float64{s.T0 + float64(i), 0, w}
	}
	_, _, hAt, wAt := grid(s.Canvas)
	per := s.GridH * s.GridW
	k, r := i/per, i%per
	t := s.T0
	for j := 0; j < k; j++ { // accumulate as AppendPositions does, for identical rounding
		t += float64(frameSpan[j%5]) * frameUnit
	}
	return [3]float64{t, hAt(r / s.GridW), wAt(r % s.GridW)}
}

// AppendPositions appends the positions of all the segment's rows.
func (s *Segment) AppendPositions(dst [][3]float64) [][3]float64 {
	switch s.Kind {
	case SegText, SegAudio, SegRefAudio:
		for i := 0; i < s.Rows; i++ {
			dst = append(dst, s.Position(i))
		}
		return dst
	}
	_, _, hAt, wAt := grid(s.Canvas)
	t := s.T0
	for k := 0; k < s.LatentT; k++ {
		for r := 0; r < s.GridH; r++ {
			h := hAt(r)
			for c := 0; c < s.GridW; c++ {
				dst = append(dst, [3]float64{t, h, wAt(c)})
			}
		}
		t += float64(frameSpan[k%5]) * frameUnit
	}
	return dst
}
