package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
)

// renderedClip is a dropped MP4 that carries the request it was made from.
type renderedClip struct {
	path string
	req  app.Request
}

// dropPaths adds dropped files as references, except a clip rendered by
// H3 Studio: for the first such clip the window offers to restore its
// settings instead (the clip is added as a reference when the user says
// no). Reading the clips' tags runs off the UI goroutine. target is the
// frame slot the drop landed on (nil: none).
func (s *Studio) dropPaths(paths []string, target *anchorWell) {
	// Adapters go to the LoRA list wherever they land: Fyne has no
	// per-widget drop targets.
	var loras []string
	paths = slices.DeleteFunc(slices.Clone(paths), func(p string) bool {
		if isLoRA(p) {
			loras = append(loras, p)
		}
		return isLoRA(p)
	})
	s.AddLoRAs(loras)
	var movies int
	for _, p := range paths {
		if isMovie(p) {
			movies++
		}
	}
	if movies == 0 {
		s.addPathsAt(paths, target)
		return
	}
	s.loading++
	s.notice.SetText(app.ReadingText(len(paths)))
	s.spawn(func() {
		var offer *renderedClip
		var refs []string
		for _, p := range paths {
			if offer == nil && isMovie(p) {
				ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
				req, ok, err := app.RequestFromClip(ctx, p)
				cancel()
				// A clip whose tag cannot be read is still a video; adding
				// it as a reference reports what is wrong with the file.
				if ok && err == nil {
					offer = &renderedClip{path: p, req: req}
					continue
				}
			}
			refs = append(refs, p)
		}
		s.cfg.Exec.Do(func() {
			s.loading--
			s.addPathsAt(refs, target)
			if offer != nil {
				s.offerRestore(*offer)
			} else if len(refs) == 0 {
				s.notice.SetText("")
			}
		})
	})
}

// isMovie is whether a file may be an MP4 the studio rendered (checked by
// name, so pictures and audio never wait for FFprobe).
func isMovie(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".mp4", ".m4v", ".mov":
		return true
	}
	return false
}

// offerRestore asks whether to put a rendered clip's settings back into
// the editor or to use the clip as a reference video.
func (s *Studio) offerRestore(c renderedClip) {
	name := filepath.Base(c.path)
	msg := widget.NewLabel(fmt.Sprintf("%s was rendered by H3 Studio (seed %d, %dx%d).\n\n"+
		"Restore its prompt, seed, preset, canvas, length, references and LoRAs into the editor? "+
		"The request you are editing is replaced.\n\nOr use the clip as a reference video.",
		name, c.req.Seed, c.req.Width, c.req.Height))
	msg.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm("Restore settings from "+name+"?", "Restore", "Add as reference", msg, func(restore bool) {
		s.restoreDlg = nil
		if restore {
			s.restore(c.req, "Settings restored from "+name+".")
		} else {
			s.AddPaths([]string{c.path})
		}
	}, s.win)
	d.Resize(fyne.NewSize(520, 260))
	s.restoreDlg = d
	d.Show()
}

// RestoreOffered is whether the window is asking to restore a dropped
// clip's settings.
func (s *Studio) RestoreOffered() bool { return s.restoreDlg != nil }

// Restore puts a past request back into the editor ("reuse settings"):
// its fields at once, and its references at once too when the window
// read them before (restoreFields).
func (s *Studio) Restore(req app.Request) { s.restore(req, app.RestoredFromHistoryText) }

// restore fills the editor and the references from req and says so.
func (s *Studio) restore(req app.Request, notice string) {
	s.batch(func() { s.restoreFields(req, notice) })
}

// restoredRef is one reference of a restored request: where it goes (a
// frame slot, or nil for the list of its kind) and the kind it had.
type restoredRef struct {
	path, kind string
	slot       *anchorWell
}

// fits is whether it can go where r goes: a frame slot takes a picture.
func (r restoredRef) fits(it *refItem) bool { return r.slot == nil || it.Kind == app.RefImage }

// restoredRefs lists req's references in request order; a request with
// only a last frame keeps it in the Last slot.
func (s *Studio) restoredRefs(req app.Request) []restoredRef {
	if req.FirstFrame != "" || req.LastFrame != "" {
		var out []restoredRef
		for _, a := range []struct {
			path string
			slot *anchorWell
		}{{req.FirstFrame, s.first}, {req.LastFrame, s.last}} {
			if a.path != "" {
				out = append(out, restoredRef{path: a.path, kind: app.RefImage, slot: a.slot})
			}
		}
		return out
	}
	out := make([]restoredRef, len(req.References))
	for i, r := range req.References {
		out[i] = restoredRef{path: r.Path, kind: r.Kind}
	}
	return out
}

// restoreFields fills the editor from req. Its references come from app's
// caches when every file was read before and is unchanged (Reuse of a
// recent render: no FFprobe or FFmpeg run, so the lists fill at once);
// otherwise they are read again off the UI goroutine and replace the
// lists in one step when all are in, so the lists never show empty
// meanwhile, and Render waits for them (loading).
func (s *Studio) restoreFields(req app.Request, notice string) {
	s.ed.fill(req)
	s.checkLoRAs()
	refs := s.restoredRefs(req)
	if req.FirstFrame != "" || req.LastFrame != "" {
		s.mode.SetSelected(modeAnchs)
	} else {
		s.mode.SetSelected(modeRefs)
	}
	items := make([]*refItem, len(refs))
	ready := true
	for i, r := range refs {
		if items[i], ready = readyRef(s.ctx, r.path, r.kind); !ready || !r.fits(items[i]) {
			ready = false // the full read below says why
			break
		}
	}
	if ready {
		s.putRestored(refs, items)
		s.notice.SetText(notice)
		return
	}
	s.loading++
	s.notice.SetText(app.RestoringText(len(refs)))
	s.spawn(func() {
		var rejected []*app.RefRejectedError
		for i, r := range refs {
			it, err := loadRef(s.ctx, r.path, r.kind)
			switch {
			case err != nil:
				rejected = append(rejected, rejection(r.path, err))
			case !r.fits(it):
				rejected = append(rejected, &app.RefRejectedError{Name: app.RefFileName(r.path), Reason: app.AnchorsTakePictures})
				it = nil
			}
			items[i] = it
		}
		s.cfg.Exec.Do(func() {
			s.loading--
			s.batch(func() { s.putRestored(refs, items) })
			s.notice.SetText(app.RestoredText(notice, rejected))
		})
	})
}

// putRestored replaces the references with items (nil: a file that could
// not be read), each where refs says. The lists are rebuilt once each and
// re-planned once, as Undo does, rather than re-planned and re-laid out
// once per file.
func (s *Studio) putRestored(refs []restoredRef, items []*refItem) {
	lists := map[*refList][]*refItem{s.images: nil, s.videos: nil, s.audio: nil}
	slots := map[*anchorWell]*refItem{s.first: nil, s.last: nil}
	for i, it := range items {
		switch {
		case it == nil:
		case refs[i].slot != nil:
			slots[refs[i].slot] = it
		default:
			l := s.listFor(it.Kind)
			lists[l] = append(lists[l], it)
		}
	}
	for l, its := range lists {
		l.items = its
		l.rebuild()
	}
	for w, it := range slots {
		if w.item != it {
			w.set(it)
		}
	}
	s.edited()
}

// rejection is why loadRef did not add path, as the notice lists it.
func rejection(path string, err error) *app.RefRejectedError {
	var rej *app.RefRejectedError
	if errors.As(err, &rej) {
		return rej
	}
	return &app.RefRejectedError{Name: app.RefFileName(path), Reason: app.Advice(err), Err: err}
}
