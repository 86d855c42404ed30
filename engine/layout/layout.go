package layout

// Layout is a request's full token and row accounting.
type Layout struct {
	Task         Task
	Canvas       Canvas // model canvas
	Frames       int    // aligned output frames
	LatentFrames int    // target video latent frames
	AudioLatents int    // target audio latents per channel
	Refs         []RefLayout
	Qwen         Presentation
	Segments     []Segment
	Rows         int // total DiT sequence length
}

// RowCounts groups the DiT rows as the plan reports them.
type RowCounts struct {
	Text       int `json:"text"`
	Conditions int `json:"conditions"` // FL2VA anchors
	References int `json:"references"` // Ref2VA images, clips and audio
	Audio      int `json:"audio"`      // target audio
	Video      int `json:"video"`      // target video
	Total      int `json:"total"`
}

// Counts sums the segments by group.
func (l *Layout) Counts() RowCounts {
	var c RowCounts
	for _, s := range l.Segments {
		switch s.Kind {
		case SegText:
			c.Text += s.Rows
		case SegAnchor:
			c.Conditions += s.Rows
		case SegRefImage, SegRefVideo, SegRefAudio:
			c.References += s.Rows
		case SegAudio:
			c.Audio += s.Rows
		case SegVideo:
			c.Video += s.Rows
		}
	}
	c.Total = l.Rows
	return c
}

// Positions returns every row's RoPE position in sequence order.
func (l *Layout) Positions() [][3]float64 {
	out := make([][3]float64, 0, l.Rows)
	for i := range l.Segments {
		out = l.Segments[i].AppendPositions(out)
	}
	return out
}

// Build validates a request and lays out its Qwen presentation and DiT rows.
func Build(s Spec) (*Layout, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	frames := AlignFrames(s.Frames)
	refs, err := s.resolveRefs(frames)
	if err != nil {
		return nil, err
	}
	l := &Layout{
		Task:         s.Task(),
		Canvas:       s.Canvas,
		Frames:       frames,
		LatentFrames: LatentFrames(frames),
		AudioLatents: AudioLatents(frames),
		Refs:         refs,
	}
	l.Qwen = buildPresentation(&s, s.Canvas, l.Refs)
	l.buildSegments(&s)
	return l, nil
}

func (l *Layout) add(seg Segment) {
	seg.Start = l.Rows
	l.Segments = append(l.Segments, seg)
	l.Rows += seg.Rows
}

func videoSeg(kind SegmentKind, ref int, t0 float64, latentT int, c Canvas, role TimestepRole) Segment {
	nh, nw, _, _ := grid(c)
	return Segment{Kind: kind, Ref: ref, Rows: latentT * nh * nw, Timestep: role, Modality: ModalityVideo,
		T0: t0, LatentT: latentT, Canvas: c, GridH: nh, GridW: nw, Pinned: role == TimestepVisualCond}
}

func audioSeg(kind SegmentKind, ref int, t0 float64, audioT int, c Canvas, role TimestepRole) Segment {
	nh, nw, _, wAt := grid(c)
	return Segment{Kind: kind, Ref: ref, Rows: 2 * audioT, Timestep: role, Modality: ModalityAudio,
		T0: t0, AudioT: audioT, Canvas: c, GridH: nh, GridW: nw, WLow: wAt(0), WHigh: wAt(nw - 1),
		Pinned: role == TimestepAudioCond}
}

// buildSegments places rows as the release does: text at (i,0,0); the media
// cursor starts at text_len; FL2VA anchors sit at the first and last frame's
// time on the target grid; Ref2VA references advance the cursor in request
// order (image +1, audio +Ta, clip +max(Ta, its span)); the target audio and
// video both start at the final cursor.
func (l *Layout) buildSegments(s *Spec) {
	text := l.Qwen.Tokens()
	l.add(Segment{Kind: SegText, Ref: -1, Rows: text, Timestep: TimestepVideo, Modality: ModalityText})
	cursor := float64(text)
	if s.First {
		l.add(videoSeg(SegAnchor, 0, cursor, 1, l.Canvas, TimestepVisualCond))
	}
	if s.Last {
		l.add(videoSeg(SegAnchor, 1, cursor+SpanSum(l.LatentFrames)-frameUnit, 1, l.Canvas, TimestepVisualCond))
	}
	for i, r := range l.Refs {
		switch r.Kind {
		case RefImage:
			l.add(videoSeg(SegRefImage, i, cursor, 1, r.Canvas, TimestepVisualCond))
			cursor++
		case RefAudio:
			// A standalone clip takes the target grid's w extremes.
			l.add(audioSeg(SegRefAudio, i, cursor, r.AudioLatents, l.Canvas, TimestepAudioCond))
			cursor += float64(r.AudioLatents)
		case RefVideo, RefVideoAudio:
			if r.AudioLatents > 0 {
				// A soundtrack takes its own clip's w extremes.
				l.add(audioSeg(SegRefAudio, i, cursor, r.AudioLatents, r.Canvas, TimestepAudioCond))
			}
			l.add(videoSeg(SegRefVideo, i, cursor, r.LatentFrames, r.Canvas, TimestepVisualCond))
			cursor += max(float64(r.AudioLatents), SpanSum(r.LatentFrames))
		}
	}
	l.add(audioSeg(SegAudio, -1, cursor, l.AudioLatents, l.Canvas, TimestepAudio))
	l.add(videoSeg(SegVideo, -1, cursor, l.LatentFrames, l.Canvas, TimestepVideo))
}
