package ui

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
	"h3studio/media"
)

// Render queues the request as edited. The button is disabled, with the
// reason shown, while the plan does not fit.
func (s *Studio) Render() {
	if s.planned != s.edits || s.loading > 0 {
		// The plan of the latest edit is not in yet: render when it is
		// (applyPlan), rather than drop the click.
		s.renderWhenPlanned = true
		s.reason.SetText(app.RenderWaitsText)
		return
	}
	if !s.fits {
		return // the reason on show says why
	}
	req, err := s.Request()
	if err != nil {
		return
	}
	if _, err := s.queue.Submit(req); err != nil {
		s.reason.SetText(app.Advice(err))
		return
	}
	s.rememberRequest(req)
	s.showQueue()
}

// CancelRunning cancels the job being rendered. The render stops at its
// next step or frame, seconds later on a slow phase, so the window says
// "Canceling…" at once and takes the button away.
func (s *Studio) CancelRunning() {
	if s.running == "" {
		return
	}
	s.canceling = s.running
	s.cancelBtn.Disable()
	s.phase.SetText(app.CancelingText)
	s.eta.SetText("")
	s.queue.Cancel(s.running)
}

// clearRefs removes every reference as one step Undo brings back.
func (s *Studio) clearRefs() {
	s.batch(func() {
		s.images.clear()
		s.videos.clear()
		s.audio.clear()
		s.first.set(nil)
		s.last.set(nil)
	})
}

// observe receives the queue's events on its worker goroutine and hands
// them to the UI: statuses in order, progress coalesced to the display rate.
func (s *Studio) observe(ev app.JobEvent) {
	if ev.Event != nil {
		e := *ev.Event
		if e.Kind == app.EventProgress {
			s.co.replace("progress", func() { s.showProgress(ev.JobID, e) })
			return
		}
		s.co.post(func() { s.showPhase(ev.JobID, e) })
		return
	}
	s.co.post(func() { s.jobStatus(ev.JobID, ev.Status) })
}

func (s *Studio) showProgress(id string, e app.Event) {
	if id != s.running || id == s.canceling {
		return
	}
	if e.Total > 0 {
		s.progress.SetValue(float64(e.Step) / float64(e.Total))
		s.phase.SetText(fmt.Sprintf("%s %d/%d", app.PhaseTitle(e.Phase), e.Step, e.Total))
	}
	if e.ETA > 0 {
		s.eta.SetText(fmt.Sprintf("%s left in %s", app.DurationText(e.ETA.Seconds()), app.PhaseTitle(e.Phase)))
	}
	if e.Preview != nil {
		s.preview.Image = e.Preview
		s.preview.Refresh()
		s.previews++
		if s.stage.SelectedIndex() != 0 {
			s.stage.SelectIndex(0)
		}
	}
}

func (s *Studio) showPhase(id string, e app.Event) {
	if id != s.running || id == s.canceling {
		return
	}
	switch e.Kind {
	case app.EventStart:
		s.phase.SetText(app.PhaseTitle(e.Phase) + "…")
		s.progress.SetValue(0)
		s.eta.SetText("")
	case app.EventDecision, app.EventWarning:
		s.notice.SetText(e.Message)
	}
}

// jobStatus shows a job's new status; the job itself (its clip, error and
// summary) is read from the queue, which updated it before saying so.
func (s *Studio) jobStatus(id string, st app.JobStatus) {
	j, _ := s.queue.Job(id)
	switch st {
	case app.StatusRunning:
		s.running = id
		s.cancelBtn.Enable()
		s.phase.SetText("Starting…")
		s.progress.SetValue(0)
		s.eta.SetText("")
	case app.StatusDone, app.StatusFailed, app.StatusCanceled:
		if s.running == id {
			s.running = ""
			s.canceling = ""
			s.cancelBtn.Disable()
			s.eta.SetText("")
			s.phase.SetText(map[app.JobStatus]string{app.StatusDone: "Done", app.StatusFailed: "Failed", app.StatusCanceled: "Canceled"}[st])
			if st == app.StatusFailed {
				s.notice.SetText("The render failed: " + app.Advice(j.Err))
			}
			if st == app.StatusDone {
				s.progress.SetValue(1)
				s.eta.SetText(j.Stats)
			} else {
				s.progress.SetValue(0)
			}
		}
		if st == app.StatusDone {
			s.openClip(j.Output)
			s.app.SendNotification(fyne.NewNotification("H3 Studio", "Render finished: "+filepath.Base(j.Output)))
		}
		s.refreshHistory()
	}
	s.showQueue()
}

// openClip loads a finished clip into the frame store and shows it on the
// timeline.
func (s *Studio) openClip(path string) {
	if path == "" {
		return
	}
	s.spawn(func() {
		st, err := media.LoadFrames(s.ctx, path, media.FrameStoreOptions{})
		s.cfg.Exec.Do(func() {
			if err != nil {
				s.notice.SetText("Cannot show " + filepath.Base(path) + ": " + app.Advice(err))
				return
			}
			s.lastOutput = path
			s.timeline.Load(st)
			s.stage.SelectIndex(1)
		})
		if err != nil {
			return
		}
		if s.cfg.LoadSound != nil {
			snd, serr := s.cfg.LoadSound(s.ctx, path)
			s.cfg.Exec.Do(func() {
				if s.timeline.Store() != st {
					return // another clip was opened meanwhile
				}
				if serr != nil {
					s.notice.SetText("No sound for " + filepath.Base(path) + ": " + app.Advice(serr))
					return
				}
				s.timeline.SetSound(snd)
			})
		}
		// Large clips scrub from a half-size proxy while the full frame
		// decodes (see BenchmarkScrub768x1344).
		if w, h := proxySize(st); w > 0 {
			px, err := media.LoadFrames(s.ctx, path, media.FrameStoreOptions{Width: w, Height: h})
			if err == nil {
				s.cfg.Exec.Do(func() {
					if s.timeline.Store() == st {
						s.timeline.LoadProxy(px)
					}
				})
			}
		}
	})
}

// clipActions are the finished clip's buttons: render it again with a new
// seed, and show it in its folder.
func (s *Studio) clipActions() fyne.CanvasObject {
	again := widget.NewButtonWithIcon("New seed", theme.ViewRefreshIcon(), s.RenderNewSeed)
	reveal := widget.NewButtonWithIcon("Show in folder", theme.FolderOpenIcon(), func() {
		if s.lastOutput == "" {
			return
		}
		u, err := url.Parse(storage.NewFileURI(filepath.Dir(s.lastOutput)).String())
		if err == nil {
			err = s.app.OpenURL(u)
		}
		if err != nil {
			s.notice.SetText("Cannot open the folder: " + err.Error())
		}
	})
	return container.NewHBox(again, reveal)
}

// RenderNewSeed queues the request in the editor again with a random seed.
func (s *Studio) RenderNewSeed() {
	s.ed.dice.OnTapped()
	s.renderWhenPlanned = true
}

// showQueue rebuilds the queue view from the queue's own list: each job
// with its status, and for jobs not finished a Cancel button; queued ones
// can be edited and moved up and down.
func (s *Studio) showQueue() {
	var jobs []app.JobInfo
	if s.queue != nil {
		jobs = s.queue.Jobs()
	}
	var rows []fyne.CanvasObject
	if len(jobs) == 0 {
		rows = append(rows, widget.NewLabel("No renders yet."))
	}
	for _, j := range jobs {
		text := fmt.Sprintf("%s — %s", short(j.Request.Prompt, 40), j.Status)
		if j.Err != nil && j.Status == app.StatusFailed {
			text += ": " + app.Advice(j.Err)
		}
		l := widget.NewLabel(text)
		l.Wrapping = fyne.TextWrapWord
		rows = append(rows, container.NewBorder(nil, nil, nil, container.NewHBox(s.jobButtons(j)...), l))
	}
	s.queueBox.Objects = rows
	s.queueBox.Refresh()
	relayout(s.queueScroll)
}

// jobButtons are a job's actions: cancel while it is queued or running;
// edit and move while it waits.
func (s *Studio) jobButtons(j app.JobInfo) []fyne.CanvasObject {
	if j.Status != app.StatusQueued && j.Status != app.StatusRunning {
		return nil
	}
	id := j.ID
	buttons := []fyne.CanvasObject{newTipButton(theme.CancelIcon(), "Cancel this render", s.tips, func() { s.queue.Cancel(id) })}
	if j.Status != app.StatusQueued {
		return buttons
	}
	req := j.Request
	// Editing a queued job takes it out of the queue and puts its
	// settings in the editor; Render queues it again.
	edit := newTipButton(theme.DocumentCreateIcon(), "Edit: take it out of the queue into the editor", s.tips, func() {
		s.queue.Cancel(id)
		s.Restore(req)
	})
	return append(buttons, edit,
		newTipButton(theme.MoveUpIcon(), "Render sooner", s.tips, func() { s.moveJob(id, -1) }),
		newTipButton(theme.MoveDownIcon(), "Render later", s.tips, func() { s.moveJob(id, 1) }))
}

// moveJob reorders a queued job; the view follows the queue.
func (s *Studio) moveJob(id string, delta int) {
	s.queue.Move(id, delta)
	s.showQueue()
}

func short(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "(no prompt)"
	}
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// refreshHistory reads the history off the UI goroutine and shows it.
func (s *Studio) refreshHistory() {
	if s.cfg.History == nil {
		return
	}
	s.spawn(func() {
		entries, err := s.cfg.History.List()
		s.cfg.Exec.Do(func() { s.showHistory(entries, err) })
	})
}

func (s *Studio) showHistory(entries []app.Entry, err error) {
	var rows []fyne.CanvasObject
	if err != nil {
		rows = append(rows, widget.NewLabel("The history cannot be read: "+app.Advice(err)))
	}
	for _, e := range entries {
		req, err := e.DecodeRequest()
		if err != nil {
			continue // an entry the app cannot reuse is not worth a row
		}
		text := fmt.Sprintf("%s\n%s · %dx%d · seed %d · %s", short(req.Prompt, 48), e.Status, req.Width, req.Height, req.Seed, e.Created.Local().Format("Jan 2 15:04"))
		l := widget.NewLabel(text)
		l.Wrapping = fyne.TextWrapWord
		reuse := widget.NewButtonWithIcon("Reuse", theme.HistoryIcon(), func() { s.Restore(req) })
		buttons := []fyne.CanvasObject{reuse}
		if e.Status == app.StatusDone && e.Output != "" {
			out := e.Output
			buttons = append(buttons, newTipButton(theme.MediaPlayIcon(), "Play on the timeline", s.tips, func() { s.openClip(out) }))
		}
		rows = append(rows, container.NewBorder(nil, nil, nil, container.NewHBox(buttons...), l))
	}
	if len(rows) == 0 {
		rows = append(rows, widget.NewLabel("Finished renders appear here."))
	}
	s.histBox.Objects = rows
	s.histBox.Refresh()
	relayout(s.histScroll)
}
