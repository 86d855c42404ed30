package ui

import (
	"slices"
	"time"
)

// typingPause separates two undo steps of prompt typing: keystrokes
// closer together than this are one step, as in a text editor.
const typingPause = time.Second

// editState is what Undo brings back: the prompt, the references and the
// LoRAs with their strengths, and the preset (a Turbo LoRA's removal
// drops the Turbo preset; undoing it brings both back). The
// other fields have their own entry-level undo, and a plan is recomputed
// from whatever the state is.
type editState struct {
	prompt               string
	mode                 string
	images, videos, clip []*refItem
	first, last          *refItem
	loras                []loraItem
	preset               string // not a step of its own: it rides along for Turbo
}

// sameRefs is whether a and b list the same files (references and LoRAs),
// whatever the prompt and the strengths.
func (a editState) sameRefs(b editState) bool {
	return a.mode == b.mode && a.first == b.first && a.last == b.last &&
		slices.Equal(a.images, b.images) && slices.Equal(a.videos, b.videos) && slices.Equal(a.clip, b.clip) &&
		slices.EqualFunc(a.loras, b.loras, func(x, y loraItem) bool { return x.Path == y.Path })
}

// editHistory is the studio's undo and redo stacks.
type editHistory struct {
	undo, redo []editState
	cur        editState
	// typedAt is when the last prompt-only step was recorded; later
	// keystrokes within typingPause join it.
	typedAt time.Time
	// hold > 0 while a batch of changes (a drop, Clear, an undo itself)
	// is applied: the batch becomes one step when it ends.
	hold int
}

// state reads the edit state off the widgets.
func (s *Studio) state() editState {
	return editState{
		prompt: s.ed.prompt.Text, mode: s.mode.Selected,
		images: slices.Clone(s.images.items), videos: slices.Clone(s.videos.items), clip: slices.Clone(s.audio.items),
		first: s.first.item, last: s.last.item, loras: slices.Clone(s.ed.loras.items),
		preset: s.ed.preset.Selected,
	}
}

// record notes the state after an edit as an undo step (or folds it into
// the typing step under way). It runs from edited, on the UI goroutine.
func (s *Studio) record() {
	h := &s.hist
	if h.hold > 0 || s.ed == nil {
		return
	}
	now := s.state()
	if now.prompt == h.cur.prompt && now.sameRefs(h.cur) && slices.Equal(now.loras, h.cur.loras) {
		h.cur.preset = now.preset // a preset change is no step, but the next one keeps it
		return
	}
	// Typing, and dragging a strength slider, send a change per keystroke
	// or pixel: those within typingPause of each other are one step.
	typing := now.sameRefs(h.cur)
	if !typing || time.Since(h.typedAt) > typingPause || len(h.undo) == 0 {
		h.undo = append(h.undo, h.cur)
	}
	if typing {
		h.typedAt = time.Now()
	} else {
		h.typedAt = time.Time{}
	}
	h.redo = nil
	h.cur = now
}

// batch applies f as one undo step.
func (s *Studio) batch(f func()) {
	s.hist.hold++
	defer func() {
		s.hist.hold--
		s.hist.typedAt = time.Time{}
		s.record()
	}()
	f()
}

// Undo brings back the prompt and references before the last edit.
func (s *Studio) Undo() { s.step(&s.hist.undo, &s.hist.redo) }

// Redo applies again what Undo took back.
func (s *Studio) Redo() { s.step(&s.hist.redo, &s.hist.undo) }

func (s *Studio) step(from, to *[]editState) {
	if len(*from) == 0 {
		return
	}
	h := &s.hist
	prev := (*from)[len(*from)-1]
	*from = (*from)[:len(*from)-1]
	*to = append(*to, h.cur)
	h.hold++
	s.setState(prev)
	h.hold--
	h.cur = prev
	h.typedAt = time.Time{}
	s.edited()
}

// setState puts st on the widgets.
func (s *Studio) setState(st editState) {
	if s.ed.prompt.Text != st.prompt {
		s.ed.prompt.SetText(st.prompt)
	}
	if s.mode.Selected != st.mode {
		s.mode.SetSelected(st.mode)
	}
	for _, l := range []struct {
		list  *refList
		items []*refItem
	}{{s.images, st.images}, {s.videos, st.videos}, {s.audio, st.clip}} {
		l.list.items = slices.Clone(l.items)
		l.list.rebuild()
	}
	s.ed.loras.items = slices.Clone(st.loras)
	s.ed.loras.rebuild()
	// The Turbo preset is offered only with its LoRA, and its LoRA's
	// removal took it away: that, and only that, Undo gives back (other
	// preset choices are not undo steps and stay as the user left them).
	s.ed.updatePresets()
	if st.preset == turboTitle && s.ed.preset.Selected != turboTitle && slices.Contains(s.ed.preset.Options, turboTitle) {
		s.ed.preset.SetSelected(turboTitle)
	}
	if s.first.item != st.first {
		s.first.set(st.first)
	}
	if s.last.item != st.last {
		s.last.set(st.last)
	}
}
