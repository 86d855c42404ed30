package ui

import (
	"context"
	"reflect"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
	"h3studio/engine/plan"
)

// PlanFunc plans a request as the render would: the plan when it fits or
// is refused, an error in one sentence when the request breaks a rule.
type PlanFunc func(ctx context.Context, req app.Request) (*plan.Plan, error)

// Config is what the studio window drives. Everything long (planning,
// probing, rendering, decoding the finished clip) runs off the UI
// goroutine and comes back through Exec.
type Config struct {
	Exec    Executor
	Render  app.RenderFunc
	Plan    PlanFunc
	History *app.History
	// OutputDir receives finished clips.
	OutputDir string
	// Machine is the machine profile the plans are made for ("" or
	// "auto": this Mac).
	Machine string
	// PlanDelay debounces re-planning while the user types.
	PlanDelay time.Duration
	// SetMemoryGB applies the memory budget override of the settings to
	// the planner and the renders (0: this Mac's own budget). It is
	// called on the UI goroutine while plans run in the background, so it
	// must be safe for that (app.Renderer.SetMemoryGB is).
	SetMemoryGB func(gb float64)
	// LoadSound decodes a finished clip's soundtrack for the timeline
	// (LoadSound in production). Nil leaves clips silent: the headless
	// tests open one audio device per process only where they mean to.
	LoadSound func(ctx context.Context, path string) (*Sound, error)
	// Memory reads the memory in use for the meter beside a render's
	// progress (app.Renderer.MemoryNow); nil shows no meter.
	Memory func() app.MemoryUse
	// LoRACoverage checks an adapter file against the model's DiT before
	// the LoRA list takes it (app.Renderer.LoRACoverage): its coverage
	// line, or the error that says why it does not fit. Nil lists
	// adapters unchecked; their plan still refuses a misfit.
	LoRACoverage func(model, path string) (string, error)
	// RefImageSize and RefClipSize size the references of every request
	// (app.Request's fields; empty: the official pipeline's sizing).
	RefImageSize, RefClipSize string
	// Defaults are a model's canvas, length and presets (app.Renderer.
	// Defaults; "" the built-in demo model). Nil keeps the release's.
	Defaults func(model string) (app.Defaults, error)
}

// Studio is the studio window's state: the request being edited, the plan
// of it, the job queue and the clip on the timeline.
type Studio struct {
	cfg    Config
	app    fyne.App
	win    fyne.Window
	ctx    context.Context
	cancel context.CancelFunc
	co     *coalescer
	queue  *app.Queue

	mode     *widget.RadioGroup
	images   *refList
	videos   *refList
	audio    *refList
	first    *anchorWell
	last     *anchorWell
	refsView *fyne.Container
	flView   *fyne.Container
	ed       *editor
	plan     *planPanel
	notice   *widget.Label

	renderBtn *widget.Button
	cancelBtn *widget.Button
	reason    *widget.Label
	phase     *widget.Label
	progress  *widget.ProgressBar
	eta       *widget.Label
	meter     *memMeter
	preview   *canvas.Image
	timeline  *Timeline
	stage     *container.AppTabs
	side      *container.AppTabs
	// Scrolls whose content changes height; refreshing one re-lays its
	// content (a VBox does not tell its parents that it grew).
	leftScroll, planScroll, queueScroll, histScroll *container.Scroll
	edScroll                                        *container.Scroll
	queueBox                                        *fyne.Container
	clearDone                                       *widget.Button // "Clear finished" above the queue
	histBox                                         *fyne.Container

	// UI-goroutine state.
	edits      int        // bumps on every edit
	planned    int        // the edit the shown plan answers
	fits       bool       // the shown plan fits and the fields parse
	shown      *plan.Plan // the plan on show (nil: none)
	loading    int        // reference files being probed
	running    string
	previews   int
	planTimer  *time.Timer
	lastOutput string
	model      string // snapshot folder; "" is the built-in demo model
	// renderWhenPlanned queues the request as soon as its plan (after
	// a change the user did not type: a new seed) says it fits.
	renderWhenPlanned bool
	// restoreDlg is the open offer to restore a dropped clip's settings.
	restoreDlg *dialog.ConfirmDialog
	settings   *settingsForm
	getModel   *getModel   // the download dialog last opened
	tips       *tipLayer   // the icon buttons' tooltips
	hist       editHistory // Undo and Redo of prompt and reference edits
	// canceling is the job a Cancel click is stopping: its progress no
	// longer replaces "Canceling…".
	canceling string
	memoryGB  float64 // the budget override; 0 is this Mac's

	// bg tracks background work so Close can wait for it: nothing may
	// reach the executor after the window is gone.
	bgMu     sync.Mutex
	bgClosed bool
	bg       sync.WaitGroup
}

// spawn runs f on its own goroutine unless the studio is closing.
func (s *Studio) spawn(f func()) {
	s.bgMu.Lock()
	defer s.bgMu.Unlock()
	if s.bgClosed {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		f()
	}()
}

// modes of the reference panel.
const (
	modeRefs  = "References"
	modeAnchs = "First & last frame"
)

// NewStudio builds the studio window on a (the real app or Fyne's test app).
// Call Close when the window goes away.
func NewStudio(a fyne.App, cfg Config) *Studio {
	if cfg.PlanDelay == 0 {
		cfg.PlanDelay = 150 * time.Millisecond
	}
	s := &Studio{cfg: cfg, app: a}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.co = newCoalescer(cfg.Exec.Do)
	s.win = a.NewWindow("H3 Studio " + app.Version)
	s.build()
	s.queue = app.NewQueue(cfg.History, cfg.Render, s.observe)
	s.win.SetOnDropped(s.OnDropped)
	s.win.SetContent(s.tips.over(s.layout()))
	s.win.SetMainMenu(s.menu())
	s.addShortcuts()
	s.win.Resize(fyne.NewSize(1280, 800))
	s.loadPrefs()
	s.loadDefaults()
	s.edited()
	// What the window opened with is where Undo stops.
	s.hist = editHistory{cur: s.state()}
	s.refreshHistory()
	return s
}

// loadDefaults asks for the model's defaults off the UI goroutine (the
// demo model is extracted on first use) and hands them to the editor. A
// model that cannot be opened keeps the defaults on show: its plan says
// what is wrong with it.
func (s *Studio) loadDefaults() {
	if s.cfg.Defaults == nil {
		return
	}
	model := s.model
	s.spawn(func() {
		d, err := s.cfg.Defaults(model)
		if err != nil {
			return
		}
		s.cfg.Exec.Do(func() {
			if model != s.model || reflect.DeepEqual(d, s.ed.defaults) {
				return // chosen again meanwhile, or nothing changes
			}
			s.ed.setDefaults(d)
			s.edited()
		})
	})
}

// Window is the studio window.
func (s *Studio) Window() fyne.Window { return s.win }

// Close stops the queue (cancelling a running render) and waits for the
// background work to end. Call it on the UI goroutine.
func (s *Studio) Close() {
	s.bgMu.Lock()
	s.bgClosed = true
	s.bgMu.Unlock()
	if s.planTimer != nil {
		s.planTimer.Stop()
	}
	s.cancel()
	s.queue.Close()
	s.bg.Wait()
	s.timeline.Pause()
}

func (s *Studio) build() {
	s.tips = newTipLayer()
	s.images = newRefList("Pictures", app.RefImage, s.edited)
	s.videos = newRefList("Videos", app.RefVideo, s.edited)
	s.audio = newRefList("Audio", app.RefAudio, s.edited)
	for _, l := range []*refList{s.images, s.videos, s.audio} {
		l.tips = s.tips
	}
	s.first = newAnchorWell("First frame", app.FirstFrameSlot, s.edited, s.tips)
	s.last = newAnchorWell("Last frame", app.LastFrameSlot, s.edited, s.tips)
	s.mode = widget.NewRadioGroup([]string{modeRefs, modeAnchs}, func(string) { s.showMode(); s.edited() })
	s.mode.Horizontal = true
	s.mode.Required = true
	s.mode.Selected = modeRefs
	s.ed = newEditor(s.edited, s.tips)
	s.ed.prompt.undo, s.ed.prompt.redo = s.Undo, s.Redo
	s.ed.loras.addBtn.OnTapped = s.AddLoRAFiles
	tmpl := s.ed.template.OnTapped
	s.ed.template.OnTapped = func() { s.batch(tmpl) }
	s.plan = newPlanPanel()
	s.notice = widget.NewLabel("Drop pictures, videos or audio anywhere on the window.")
	s.notice.Wrapping = fyne.TextWrapWord

	s.renderBtn = widget.NewButtonWithIcon("Render", theme.MediaPlayIcon(), s.Render)
	s.renderBtn.Importance = widget.HighImportance
	s.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), s.CancelRunning)
	s.cancelBtn.Disable()
	s.reason = widget.NewLabel("")
	s.reason.Wrapping = fyne.TextWrapWord
	s.phase = widget.NewLabel("Idle")
	s.progress = widget.NewProgressBar()
	s.eta = widget.NewLabel("")
	s.meter = newMemMeter(s.cfg.Memory)
	s.preview = canvas.NewImageFromImage(nil)
	s.preview.FillMode = canvas.ImageFillContain
	s.preview.SetMinSize(fyne.NewSize(viewerMinWidth, viewerMinHeight)) // the same picture as the timeline's
	s.timeline = NewTimeline(s.cfg.Exec.Do)
	s.queueBox = container.NewVBox()
	s.clearDone = widget.NewButtonWithIcon("Clear finished", theme.ContentClearIcon(), s.ClearFinished)
	s.histBox = container.NewVBox()
	s.showQueue()
}

func (s *Studio) layout() fyne.CanvasObject {
	add := widget.NewButtonWithIcon("Add…", theme.ContentAddIcon(), s.AddFiles)
	settings := newTipButton(theme.SettingsIcon(), "Settings", s.tips, s.ShowSettings)
	clear := widget.NewButtonWithIcon("Clear", theme.ContentClearIcon(), s.clearRefs)
	s.refsView = container.NewVBox(s.images.box, s.videos.box, s.audio.box)
	s.flView = container.NewVBox(s.first.view(), s.last.view())
	s.showMode()
	s.leftScroll = container.NewVScroll(container.NewVBox(s.refsView, s.flView))
	left := container.NewBorder(
		container.NewVBox(widget.NewLabelWithStyle("Inputs", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), s.mode),
		container.NewVBox(container.NewBorder(nil, nil, container.NewHBox(add, clear), settings), noticeBox(s.notice)), nil, nil,
		s.leftScroll)

	s.stage = container.NewAppTabs(
		container.NewTabItem("Preview", s.preview),
		container.NewTabItem("Timeline", container.NewBorder(nil, s.clipActions(), nil, nil, s.timeline)))
	center := s.centerColumn()

	s.planScroll = container.NewVScroll(s.plan.view())
	s.queueScroll = container.NewVScroll(s.queueBox)
	s.histScroll = container.NewVScroll(s.histBox)
	s.side = container.NewAppTabs(
		container.NewTabItem("Plan", s.planScroll),
		container.NewTabItem("Queue", container.NewBorder(container.NewHBox(s.clearDone), nil, nil, nil, s.queueScroll)),
		container.NewTabItem("History", s.histScroll))
	split := container.NewHSplit(left, container.NewHSplit(center, s.side))
	split.Offset = 0.28
	split.Trailing.(*container.Split).Offset = 0.62
	return split
}

func (s *Studio) showMode() {
	if s.refsView == nil {
		return
	}
	if s.mode.Selected == modeAnchs {
		s.refsView.Hide()
		s.flView.Show()
	} else {
		s.flView.Hide()
		s.refsView.Show()
	}
}

// Request is the request as edited, with the field errors found reading it.
func (s *Studio) Request() (app.Request, error) {
	r := app.Request{Model: s.model, Machine: s.cfg.Machine, RefImageSize: s.cfg.RefImageSize, RefClipSize: s.cfg.RefClipSize}
	err := s.ed.apply(&r)
	// Named now, with the seed just read: the plan checks the folder the
	// render will write to, and Render submits this very request.
	r.Output = app.OutputPath(s.cfg.OutputDir, r.Seed, time.Now())
	if s.mode.Selected == modeAnchs {
		if s.first.item != nil {
			r.FirstFrame = s.first.item.Path
		}
		if s.last.item != nil {
			r.LastFrame = s.last.item.Path
		}
		return r, err
	}
	for _, l := range []*refList{s.images, s.videos, s.audio} {
		for _, it := range l.items {
			r.References = append(r.References, app.Reference{Kind: it.Kind, Path: it.Path})
		}
	}
	return r, err
}

// refLabels are the names the model gives the references, in request order.
func (s *Studio) refLabels() []string {
	var out []string
	for _, l := range []*refList{s.images, s.videos, s.audio} {
		for i := range l.items {
			out = append(out, l.labelOf(i))
		}
	}
	return out
}

// edited re-plans after a pause in editing. It runs on the UI goroutine.
func (s *Studio) edited() {
	if s.plan == nil {
		return // still building
	}
	s.edits++
	seq := s.edits
	s.ed.updatePresets()
	s.record()
	relayout(s.leftScroll)
	relayout(s.edScroll) // the LoRA list grows and shrinks
	s.ed.updateAligned()
	req, err := s.Request()
	if err != nil {
		s.applyPlan(seq, nil, err)
		return
	}
	if s.planTimer != nil {
		s.planTimer.Stop()
	}
	s.planTimer = time.AfterFunc(s.cfg.PlanDelay, func() {
		s.spawn(func() {
			p, err := s.cfg.Plan(s.ctx, req)
			s.cfg.Exec.Do(func() { s.applyPlan(seq, p, err) })
		})
	})
}

// applyPlan shows the plan of edit seq, unless the user has edited since.
func (s *Studio) applyPlan(seq int, p *plan.Plan, err error) {
	if seq != s.edits {
		return
	}
	s.planned = seq
	s.shown = p
	switch {
	case err != nil:
		s.plan.clear("Cannot render yet")
		s.fits = false
		s.reason.SetText(app.Advice(err))
	case p.Verdict != plan.Fits:
		s.plan.show(p, s.refLabels())
		s.fits = false
		s.reason.SetText(app.Advice(&app.RefusedError{Plan: p}))
	default:
		s.plan.show(p, s.refLabels())
		s.fits = true
		s.reason.SetText("")
	}
	relayout(s.planScroll)
	// A click that waited for this plan renders now, or the reason just
	// shown says why not; references still being read are part of the
	// request, so the click waits for them too.
	if s.renderWhenPlanned && s.loading == 0 {
		s.renderWhenPlanned = false
		if s.fits {
			defer s.Render()
		}
	}
	if s.fits {
		s.renderBtn.Enable()
	} else {
		s.renderBtn.Disable()
	}
}

// relayout refreshes a scroll whose content changed height (nil while the
// window is being built).
func relayout(sc *container.Scroll) {
	if sc != nil {
		sc.Refresh()
	}
}

// OnDropped is the window's drop handler: files are probed off the UI
// goroutine and routed to the list of their kind, in the order dropped (in
// first & last frame mode, to the frame slot the drop landed on); a clip
// rendered by H3 Studio offers to restore its settings instead.
func (s *Studio) OnDropped(pos fyne.Position, uris []fyne.URI) {
	var paths []string
	for _, u := range uris {
		if u.Scheme() == "file" {
			paths = append(paths, u.Path())
		}
	}
	s.dropPaths(paths, s.slotAt(pos))
}

// AddPaths adds files as references (or anchors in first/last mode).
func (s *Studio) AddPaths(paths []string) { s.addPathsAt(paths, nil) }

// addPathsAt adds files as AddPaths does; target is the frame slot a drop
// landed on (nil: none). The notice then says what went where and what
// was not added, and why.
func (s *Studio) addPathsAt(paths []string, target *anchorWell) {
	if len(paths) == 0 {
		return
	}
	s.loading++
	s.notice.SetText(app.ReadingText(len(paths)))
	s.spawn(func() {
		var items []*refItem
		var rejected []*app.RefRejectedError
		for _, p := range paths {
			it, err := loadRef(s.ctx, p, "")
			if err != nil {
				rejected = append(rejected, rejection(p, err))
			} else {
				items = append(items, it)
			}
		}
		s.cfg.Exec.Do(func() {
			s.loading--
			var added [][2]string
			var unplaced []*app.RefRejectedError
			s.batch(func() { added, unplaced = s.place(items, target) })
			if len(items) == 0 && s.renderWhenPlanned {
				s.edited() // nothing was added to re-plan for: a waiting click needs this plan
			}
			s.notice.SetText(app.AddedText(added, append(rejected, unplaced...)))
		})
	})
}

// Settled reports whether every added file has been read and the plan on
// show answers the latest edit (scripts and tests wait for it).
func (s *Studio) Settled() bool { return s.loading == 0 && s.planned == s.edits }

// Previews counts the step previews shown so far.
func (s *Studio) Previews() int { return s.previews }

// Clip is the finished clip on the timeline ("" before the first).
func (s *Studio) Clip() string { return s.lastOutput }

// Timeline is the viewer of the finished clip.
func (s *Studio) Timeline() *Timeline { return s.timeline }
