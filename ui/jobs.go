package ui

import (
	"fmt"
	"image"
	"net/url"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
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
	case app.EventEnd:
		if e.Plan != nil {
			s.meter.plan(e.Plan.Memory.PeakBytes)
		}
	}
}

// jobStatus shows a job's new status; the job itself (its clip, error and
// summary) is read from the queue, which updated it before saying so.
func (s *Studio) jobStatus(id string, st app.JobStatus) {
	j, _ := s.queue.Job(id)
	switch st {
	case app.StatusRunning:
		s.running = id
		s.meter.start(s.spawn, s.co.post, s.ctx.Done())
		s.cancelBtn.Enable()
		s.phase.SetText("Starting…")
		s.progress.SetValue(0)
		s.eta.SetText("")
	case app.StatusDone, app.StatusFailed, app.StatusCanceled:
		if s.running == id {
			s.running = ""
			s.meter.end()
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
// with its thumbnail once it ended, what sets it apart (prompt, mode,
// canvas and length, seed) and where it stands; for jobs not finished a
// Cancel button, and queued ones can be edited and moved up and down.
func (s *Studio) showQueue() {
	var jobs []app.JobInfo
	if s.queue != nil {
		jobs = s.queue.Jobs()
	}
	var rows []fyne.CanvasObject
	if len(jobs) == 0 {
		rows = append(rows, widget.NewLabel("No renders yet."))
	}
	finished := 0
	for _, j := range jobs {
		if !j.Finished.IsZero() {
			finished++
		}
		advice := ""
		if j.Err != nil && j.Status == app.StatusFailed {
			advice = app.Advice(j.Err)
		}
		rows = append(rows, jobRow(j.Thumb, j.Request, app.JobStateText(j.Status, j.Started, j.Finished), advice, s.jobButtons(j)))
	}
	if finished > 0 {
		s.clearDone.Enable()
	} else {
		s.clearDone.Disable()
	}
	s.queueBox.Objects = rows
	s.queueBox.Refresh()
	relayout(s.queueScroll)
}

// ClearFinished takes the finished jobs off the queue view; the history
// keeps them.
func (s *Studio) ClearFinished() {
	s.queue.ClearFinished()
	s.showQueue()
}

// rowThumbSide is the square a queue or history row's thumbnail fills.
const rowThumbSide = 56

// jobRow is one row of the queue or the history: the job's thumbnail
// (blank while it has none, so every row's text starts at the same
// place), its prompt, its details on one line, its state and, for a
// failed job, why; its buttons on the right.
func jobRow(thumb image.Image, req app.Request, state, advice string, buttons []fyne.CanvasObject) fyne.CanvasObject {
	img := canvas.NewImageFromImage(thumb)
	img.FillMode = canvas.ImageFillContain
	img.SetMinSize(fyne.NewSize(rowThumbSide, rowThumbSide))
	// One line each, cut with an ellipsis: wrapped, a narrow side panel
	// broke the date and the seed over two lines.
	text := widget.NewLabel(app.JobTitle(req.Prompt, 48) + "\n" + app.JobDetails(req) + "\n" + state)
	text.Truncation = fyne.TextTruncateEllipsis
	body := container.NewVBox(text)
	if advice != "" {
		why := widget.NewLabel(advice)
		why.Wrapping = fyne.TextWrapWord
		body.Add(why)
	}
	return container.NewBorder(nil, nil, img, container.NewHBox(buttons...), body)
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

// refreshHistory reads the history off the UI goroutine and shows it.
func (s *Studio) refreshHistory() {
	if s.cfg.History == nil {
		return
	}
	s.spawn(func() {
		entries, err := s.cfg.History.List()
		thumbs := s.historyThumbs(entries)
		s.cfg.Exec.Do(func() { s.showHistory(entries, thumbs, err) })
	})
}

// historyThumbRows is how many of the newest history rows get a picture:
// each is an FFmpeg decode the first time, and the history is redrawn
// after every job, so a long history must not redecode hundreds of clips
// (app's cache holds fewer than that).
const historyThumbRows = 48

// historyThumbs draws the newest entries' thumbnails off the UI
// goroutine: a finished clip's poster frame (app caches it), else the
// last step preview the queue kept of a job that stopped early in this
// session.
func (s *Studio) historyThumbs(entries []app.Entry) map[string]image.Image {
	out := map[string]image.Image{}
	for _, e := range entries[:min(len(entries), historyThumbRows)] {
		if e.Status == app.StatusDone && e.Output != "" {
			if th, err := app.Thumbnail(s.ctx, e.Output, app.ThumbSide); err == nil {
				out[e.ID] = th
				continue
			}
		}
		if j, ok := s.queue.Job(e.ID); ok && j.Thumb != nil {
			out[e.ID] = j.Thumb
		}
	}
	return out
}

func (s *Studio) showHistory(entries []app.Entry, thumbs map[string]image.Image, err error) {
	var rows []fyne.CanvasObject
	if err != nil {
		rows = append(rows, widget.NewLabel("The history cannot be read: "+app.Advice(err)))
	}
	for _, e := range entries {
		req, err := e.DecodeRequest()
		if err != nil {
			continue // an entry the app cannot reuse is not worth a row
		}
		// An icon, as the queue's are: a worded button took the width the
		// seed and the length need to show.
		reuse := newTipButton(theme.HistoryIcon(), "Reuse: put these settings back into the editor", s.tips, func() { s.Restore(req) })
		out := e.Output
		play := newTipButton(theme.MediaPlayIcon(), "Play on the timeline", s.tips, func() { s.openClip(out) })
		if e.Status != app.StatusDone || out == "" {
			play.Disable() // kept, disabled, so every row's Reuse lines up
		}
		state := app.JobStateText(e.Status, e.Started, e.Finished) + " · " + app.JobWhen(e.Created)
		rows = append(rows, jobRow(thumbs[e.ID], req, state, "", []fyne.CanvasObject{reuse, play}))
	}
	if len(rows) == 0 {
		rows = append(rows, widget.NewLabel("Finished renders appear here."))
	}
	s.histBox.Objects = rows
	s.histBox.Refresh()
	relayout(s.histScroll)
}
