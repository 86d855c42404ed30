package ui

import (
	"fmt"
	"image"
	"image/draw"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
	"h3studio/media"
)

// maxShuttle is the fastest J/L shuttle speed, as in video editors
// (1, 2, 4, 8x).
const maxShuttle = 8

// viewerMinWidth and viewerMinHeight are the smallest picture the viewer
// shows (studio.go may size the Preview tab and its editor/viewer split
// with them): 16:9, near H3's 1344x768 landscape canvas, at 243 px tall,
// a third taller than the 180 px a new user found too small. 432 px fits
// the middle column of a 1024-px-wide window (about 0.45 of it), and 243
// px plus the transport bar leaves a 700-px-tall window about 360 px for
// the editor above.
const viewerMinWidth, viewerMinHeight = 432, 243

// Timeline is the viewer of a finished clip: a picture over the media frame
// store, a frame-accurate scrub slider and a time code. It takes keyboard
// focus when tapped, so its keys (Space, J/K/L, arrows, Home/End) act only on
// the active viewer and never steal typing from the prompt.
type Timeline struct {
	widget.BaseWidget

	do     func(func())
	store  *media.FrameStore
	img    *canvas.Image
	slider *widget.Slider
	// code is the time code (line 1) and the loop and audio note (line
	// 2), in codeCell's fixed size; shuttle is the J/K/L speed.
	code     *widget.Label
	codeCell *fixedLayout
	shuttle  *widget.Label
	marks    *loopMarks
	play     *widget.Button
	index    int
	shift    bool
	sharp    bool
	// hoverImg is the frame under the pointer over the scrub bar, in its
	// own cell beside the slider; hoverIndex is its frame or -1.
	hoverImg   *canvas.Image
	hoverIndex int
	// in and out bound the loop (I and O keys); -1 when unset.
	in, out int
	proxy   *media.FrameStore
	// onSharp, when set, is told each time a full-size frame is on
	// screen (the scrub benchmark's clock).
	onSharp func(int)

	// speed is the shuttle speed in frames per frame time: 0 paused,
	// negative reverse. Only the UI goroutine changes it; the playback
	// goroutine reads it through seq.
	speed int
	seq   int // bumps on every speed change so a stale ticker stops
	// sound is the clip's soundtrack (nil or silent: video only); note
	// follows the time code ("no audio device").
	sound *Sound
	note  string
	head  playhead // the running playback's clock (tests read it)

	// cacheMu guards the decoded frames and the background decoder's
	// request; store is written under it too, as the decoder reads it.
	cacheMu  sync.Mutex
	cache    map[int]image.Image
	order    []int
	want     int
	decoding bool
}

// NewTimeline makes an empty viewer; Load gives it a clip. do runs
// updates on the UI goroutine (playback ticks come from a timer).
func NewTimeline(do func(func())) *Timeline {
	t := &Timeline{do: do, cache: map[int]image.Image{}}
	t.img = canvas.NewImageFromImage(nil)
	t.img.FillMode = canvas.ImageFillContain
	t.img.ScaleMode = canvas.ImageScaleFastest
	t.img.SetMinSize(fyne.NewSize(viewerMinWidth, viewerMinHeight))
	t.slider = widget.NewSlider(0, 1)
	t.slider.Step = 1
	t.slider.OnChanged = func(v float64) { t.Seek(int(v + 0.5)) }
	t.code = widget.NewLabel(app.TimecodeText(0, 0, media.FPS) + "\n")
	// The cell, not the text, sets the width; a second line longer than
	// the time code (loop and audio note together) ends in an ellipsis.
	t.code.Truncation = fyne.TextTruncateEllipsis
	t.codeCell = &fixedLayout{}
	t.sizeCodeCell(0, media.FPS)
	t.shuttle = widget.NewLabel("")
	t.marks = newLoopMarks(t)
	t.play = widget.NewButtonWithIcon("", theme.MediaPlayIcon(), t.TogglePlay)
	t.hoverImg = canvas.NewImageFromImage(nil)
	t.hoverImg.FillMode = canvas.ImageFillContain
	t.hoverImg.Hide()
	t.hoverIndex = -1
	t.ExtendBaseWidget(t)
	return t
}

// CreateRenderer lays out the picture over a transport bar.
func (t *Timeline) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewBorder(nil, t.transportBar(), nil, nil, t.img))
}

// Load shows a clip's frames, from the first.
func (t *Timeline) Load(s *media.FrameStore) {
	t.Pause()
	t.sound, t.note = nil, ""
	t.cacheMu.Lock()
	t.store, t.cache, t.order, t.want = s, map[int]image.Image{}, nil, -1
	t.cacheMu.Unlock()
	t.proxy = nil
	t.in, t.out = -1, -1
	t.slider.Max = float64(max(s.Len()-1, 1))
	t.sizeCodeCell(s.Len(), s.FPS())
	t.index = -1
	t.Seek(0)
	t.marks.Refresh()
	// A clip longer than the template widened the time-code cell.
	t.Refresh()
}

// Store is the clip being viewed (nil before Load).
func (t *Timeline) Store() *media.FrameStore { return t.store }

// Index is the frame on screen.
func (t *Timeline) Index() int { return t.index }

// Image is the picture on screen.
func (t *Timeline) Image() image.Image { return t.img.Image }

// Speed is the shuttle speed (0 paused, negative reverse).
func (t *Timeline) Speed() int { return t.speed }

// SetSound gives the clip just loaded its soundtrack (from LoadSound;
// Load drops the previous clip's): 1x playback then follows the audio clock. A clip whose sound cannot play
// here says so once, after its time code, and plays silently.
func (t *Timeline) SetSound(s *Sound) {
	t.sound.stop()
	t.sound, t.note = s, ""
	if s.DeviceErr() != nil {
		t.note = app.NoAudioDeviceText
	}
	if t.store != nil {
		t.replay()
	}
}

// Seek shows frame i (clamped to the clip) and moves the slider to it;
// during playback, playing (and its sound) continues from there.
func (t *Timeline) Seek(i int) {
	if t.seek(i) && t.speed != 0 {
		t.setSpeed(t.speed)
	}
}

// seek shows frame i and reports whether it moved. A frame not decoded
// recently shows first from the proxy (when the clip has one) and is
// replaced by the full-size frame when the background decode finishes, so
// the UI goroutine never waits on a large decode.
func (t *Timeline) seek(i int) bool {
	if t.store == nil || t.store.Len() == 0 {
		return false
	}
	i = min(max(i, 0), t.store.Len()-1)
	if i == t.index {
		return false
	}
	f, sharp, err := t.quick(i)
	if err != nil {
		t.code.SetText("frame " + fmt.Sprint(i) + ": " + err.Error())
		return false
	}
	t.index = i
	t.show(f, sharp)
	if int(t.slider.Value+0.5) != i {
		t.slider.SetValue(float64(i)) // calls back into Seek, which returns at once
	}
	t.showCode()
	return true
}

// showCode shows the time code, and under it the audio note and the
// loop when there are; the note comes first, as the loop is also drawn on
// the bar.
func (t *Timeline) showCode() {
	var more []string
	if t.note != "" {
		more = append(more, t.note)
	}
	if lo, hi, ok := t.loop(); ok {
		more = append(more, app.LoopText(lo, hi))
	}
	t.code.SetText(app.TimecodeText(t.index, t.store.Len(), t.store.FPS()) + "\n" + strings.Join(more, "  "))
}

// loop is the in/out range when both are set in order.
func (t *Timeline) loop() (int, int, bool) {
	return t.in, t.out, t.in >= 0 && t.out > t.in
}

// SetIn and SetOut mark the loop's ends at the current frame (I and O).
func (t *Timeline) SetIn()  { t.in = t.index; t.replay() }
func (t *Timeline) SetOut() { t.out = t.index; t.replay() }

// ClearLoop removes the in and out marks (Escape).
func (t *Timeline) ClearLoop() { t.in, t.out = -1, -1; t.replay() }

// replay restarts playback so a changed loop takes effect, and refreshes
// the time code and the marks.
func (t *Timeline) replay() {
	t.marks.Refresh()
	if t.store == nil {
		return
	}
	if t.speed != 0 {
		t.setSpeed(t.speed)
	}
	t.showCode()
}

func (t *Timeline) show(f image.Image, sharp bool) {
	t.img.Image = f
	t.img.Refresh()
	t.sharp = sharp
	if !sharp {
		t.refine(t.index)
	} else if t.onSharp != nil {
		t.onSharp(t.index)
	}
}

// Sharp reports whether the frame on screen is the full-size one.
func (t *Timeline) Sharp() bool { return t.sharp }

// quick returns frame i at once: from the cache, else from the proxy
// (not sharp), else decoded here.
func (t *Timeline) quick(i int) (image.Image, bool, error) {
	t.cacheMu.Lock()
	f, ok := t.cache[i]
	t.cacheMu.Unlock()
	if ok {
		return f, true, nil
	}
	if t.proxy != nil {
		if p, err := t.proxy.Frame(i); err == nil {
			return toRGBA(p), false, nil
		}
	}
	f, err := t.frame(i)
	return f, err == nil, err
}

// refine asks the decoder goroutine for the full-size frame i; only the
// latest request is kept, so a fast drag does not queue stale decodes.
func (t *Timeline) refine(i int) {
	t.cacheMu.Lock()
	t.want = i
	start := !t.decoding
	t.decoding = true
	store := t.store
	t.cacheMu.Unlock()
	if start {
		go t.decodeLoop(store)
	}
}

func (t *Timeline) decodeLoop(store *media.FrameStore) {
	for {
		t.cacheMu.Lock()
		i := t.want
		if i < 0 || t.store != store {
			t.decoding = false
			t.cacheMu.Unlock()
			return
		}
		t.want = -1
		t.cacheMu.Unlock()
		f, err := t.frame(i)
		if err != nil {
			continue
		}
		t.do(func() {
			if t.store == store && t.index == i && !t.sharp {
				t.show(f, true)
			}
		})
	}
}

// LoadProxy gives the viewer a reduced copy of the clip to show while a
// full-size frame decodes; it must hold the same frames as the clip.
func (t *Timeline) LoadProxy(p *media.FrameStore) {
	if t.store != nil && p.Len() == t.store.Len() {
		t.proxy = p
	}
}

func toRGBA(img image.Image) *image.RGBA {
	if f, ok := img.(*image.RGBA); ok {
		return f
	}
	f := image.NewRGBA(image.Rect(0, 0, img.Bounds().Dx(), img.Bounds().Dy()))
	draw.Draw(f, f.Rect, img, img.Bounds().Min, draw.Src)
	return f
}

// frame decodes frame i through a small cache: stepping back and forth
// over the same frames (scrubbing, J/K/L around a cut) decodes once.
func (t *Timeline) frame(i int) (image.Image, error) {
	t.cacheMu.Lock()
	f, ok := t.cache[i]
	store := t.store
	t.cacheMu.Unlock()
	if ok {
		return f, nil
	}
	dec, err := store.Frame(i)
	if err != nil {
		return nil, err
	}
	// Fyne's GL painter uploads an *image.RGBA as it is and converts
	// anything else first; converting here keeps that cost inside the
	// measured scrub and lets the cache hold upload-ready frames.
	f = toRGBA(dec)
	t.cacheMu.Lock()
	defer t.cacheMu.Unlock()
	if t.store != store {
		return f, nil
	}
	const keep = 16 // a 768x1344 frame is 4 MB as RGBA
	if len(t.order) >= keep {
		delete(t.cache, t.order[0])
		t.order = t.order[1:]
	}
	t.cache[i] = f
	t.order = append(t.order, i)
	return f, nil
}

// TogglePlay is Space: play forward at normal speed, or pause.
func (t *Timeline) TogglePlay() {
	if t.speed != 0 {
		t.Pause()
		return
	}
	if t.store != nil && t.index >= t.store.Len()-1 {
		t.Seek(0)
	}
	t.setSpeed(1)
}

// Pause is K.
func (t *Timeline) Pause() { t.setSpeed(0) }

// Shuttle is J (dir -1) or L (dir +1): start in that direction, or double
// the speed up to maxShuttle.
func (t *Timeline) Shuttle(dir int) {
	s := dir
	if t.speed != 0 && (t.speed > 0) == (dir > 0) {
		s = t.speed * 2
		if s > maxShuttle || s < -maxShuttle {
			s = t.speed
		}
	}
	t.setSpeed(s)
}

func (t *Timeline) setSpeed(s int) {
	if t.store == nil {
		s = 0
	}
	t.speed = s
	t.seq++
	t.shuttle.SetText(app.ShuttleText(s))
	// Sound plays at 1x forward only; other speeds are muted, as in editors.
	t.sound.stop()
	t.head = nil
	if s == 0 {
		t.play.SetIcon(theme.MediaPlayIcon())
		return
	}
	t.play.SetIcon(theme.MediaPauseIcon())
	lo, hi, ok := t.loop()
	if !ok {
		lo, hi = -1, -1
	}
	n, fps := t.store.Len(), t.store.FPS()
	interval := max(time.Duration(float64(time.Second)/(fps*float64(abs(s)))), frameInterval)
	var head playhead
	if s == 1 && !t.sound.Silent() {
		// The audio clock moves in buffer-sized steps; polling at the
		// display rate shows each frame as soon as its sound is heard.
		head, interval = t.sound.start(t.index, n, fps, lo, hi), frameInterval
	}
	if head == nil {
		head = wallPlayhead(s, t.index, n, fps, lo, hi, time.Now())
	}
	t.head = head
	go t.run(t.seq, interval, head)
}

// playhead says which frame playback has reached at a tick, and whether
// playback is over. The ticker goroutine calls it, so it touches no widget.
type playhead func(now time.Time) (frame int, end bool)

// wallPlayhead computes the frame from the wall clock, so a slow repaint
// skips frames instead of slowing down. With a loop (lo < hi, from inside
// it) it wraps inside it instead of stopping.
func wallPlayhead(speed, from, n int, fps float64, lo, hi int, start time.Time) playhead {
	return func(now time.Time) (int, bool) {
		moved := int(now.Sub(start).Seconds() * fps * float64(speed))
		if lo < hi && (from >= lo && from <= hi) {
			span := hi - lo + 1
			return lo + ((from-lo+moved)%span+span)%span, false
		}
		target := from + moved
		return min(max(target, 0), n-1), target >= n-1 || target <= 0
	}
}

// run advances the playhead every interval until playback ends or a newer
// speed change (seq) replaces it.
func (t *Timeline) run(seq int, interval time.Duration, head playhead) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var stale atomic.Bool
	for now := range tick.C {
		if stale.Load() {
			return
		}
		target, end := head(now)
		t.do(func() {
			if t.seq != seq {
				stale.Store(true)
				return
			}
			t.seek(target)
			if end {
				t.Pause()
			}
		})
		if end {
			return
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// Tapped focuses the viewer so its keys work.
func (t *Timeline) Tapped(*fyne.PointEvent) {
	if c := fyne.CurrentApp().Driver().CanvasForObject(t); c != nil {
		c.Focus(t)
	}
}

// FocusGained is part of fyne.Focusable.
func (t *Timeline) FocusGained() {}

// FocusLost is part of fyne.Focusable.
func (t *Timeline) FocusLost() { t.shift = false }

// TypedRune handles the letter keys: J/K/L shuttle, I/O loop marks (Space arrives as a key, not a rune
// here, as Fyne's own Button reads it).
func (t *Timeline) TypedRune(r rune) {
	switch r {
	case 'j', 'J':
		t.Shuttle(-1)
	case 'k', 'K':
		t.Pause()
	case 'l', 'L':
		t.Shuttle(1)
	case 'i', 'I':
		t.SetIn()
	case 'o', 'O':
		t.SetOut()
	}
}

// TypedKey handles arrows, Home and End; Shift+arrow steps one second.
func (t *Timeline) TypedKey(ev *fyne.KeyEvent) {
	step := 1
	if t.shift && t.store != nil {
		step = int(t.store.FPS() + 0.5)
	}
	switch ev.Name {
	case fyne.KeyLeft:
		t.Pause()
		t.Seek(t.index - step)
	case fyne.KeyRight:
		t.Pause()
		t.Seek(t.index + step)
	case fyne.KeyHome:
		t.Pause()
		t.Seek(0)
	case fyne.KeyEnd:
		t.Pause()
		if t.store != nil {
			t.Seek(t.store.Len() - 1)
		}
	case fyne.KeySpace:
		t.TogglePlay()
	case fyne.KeyEscape:
		t.ClearLoop()
	}
}

// KeyDown tracks Shift (desktop.Keyable).
func (t *Timeline) KeyDown(ev *fyne.KeyEvent) {
	if ev.Name == desktop.KeyShiftLeft || ev.Name == desktop.KeyShiftRight {
		t.shift = true
	}
}

// KeyUp tracks Shift (desktop.Keyable).
func (t *Timeline) KeyUp(ev *fyne.KeyEvent) {
	if ev.Name == desktop.KeyShiftLeft || ev.Name == desktop.KeyShiftRight {
		t.shift = false
	}
}

// proxyPixels is the frame size above which the studio loads a half-size
// proxy for scrubbing: Go decodes a 768x1344 JPEG frame in about 10 ms on
// a fast core, a 512x512 one in a third of that.
const proxyPixels = 400_000

// proxySize is the proxy frame size for a clip, or 0, 0 when the clip is
// small enough to scrub at full size.
func proxySize(s *media.FrameStore) (int, int) {
	w, h := s.Size()
	if w*h <= proxyPixels {
		return 0, 0
	}
	return w / 2 &^ 1, h / 2 &^ 1
}
