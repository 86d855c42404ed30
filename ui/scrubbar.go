package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
)

// codeTemplateFrames is the frame count the time-code cell is sized for:
// H3 makes at most a few hundred frames (5+17n at 24 fps), so three digits
// give every clip the same bar; a longer clip widens the cell on Load.
const codeTemplateFrames = 999

// transportBar is the row under the picture: play and the shuttle speed,
// the slider with the loop marks under it and the hover strip over it,
// then the hover thumbnail and the time code. Every cell beside the slider
// has a fixed size, so the slider never changes width as text changes
// (GUI-NOTES pitfall 8) or a thumbnail appears.
func (t *Timeline) transportBar() fyne.CanvasObject {
	speed := container.New(&fixedLayout{size: labelSize(app.ShuttleText(-maxShuttle))}, t.shuttle)
	thumb := container.New(&fixedLayout{size: fyne.NewSize(hoverThumbWidth, hoverThumbHeight)}, t.hoverImg)
	code := container.New(t.codeCell, t.code)
	track := container.NewStack(t.marks, t.slider, newScrubHover(t))
	return container.NewBorder(nil, nil, container.NewHBox(t.play, speed), container.NewHBox(thumb, code), track)
}

// sizeCodeCell fits the time-code cell to a clip of n frames at fps: the
// widest time code of a three-digit clip, or of this clip when longer, on
// two lines (the second says the loop and the audio note).
func (t *Timeline) sizeCodeCell(n int, fps float64) {
	wide := app.TimecodeText(codeTemplateFrames-1, codeTemplateFrames, fps)
	if n > codeTemplateFrames {
		wide = app.TimecodeText(n-1, n, fps)
	}
	t.codeCell.size = labelSize(wide + "\n ")
}

// labelSize is the size a label needs to show text, measured with a label
// so theme padding and line height are counted as the label counts them.
func labelSize(text string) fyne.Size { return widget.NewLabel(text).MinSize() }

// fixedLayout gives its objects one size whatever they hold.
type fixedLayout struct{ size fyne.Size }

func (l *fixedLayout) MinSize([]fyne.CanvasObject) fyne.Size { return l.size }

func (l *fixedLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		o.Move(fyne.NewPos(0, 0))
		o.Resize(size)
	}
}

// trackInset is how far Fyne's slider insets its track at each end (the
// handle's radius plus inner padding, Slider.endOffset): the marks and the
// hover strip use the slider's own geometry, so a mark sits where the
// handle stands on that frame.
func trackInset(s *widget.Slider) float32 {
	th := s.Theme()
	return (th.Size(theme.SizeNameInlineIcon)-4)/2 + th.Size(theme.SizeNameInnerPadding) - 1.5
}

// trackX is where slider s, width wide, puts value v.
func trackX(s *widget.Slider, v float64, width float32) float32 {
	pad := trackInset(s)
	if s.Max <= s.Min || width <= 2*pad {
		return pad
	}
	return pad + float32((v-s.Min)/(s.Max-s.Min))*(width-2*pad)
}

// loopMarks draws the in and out points on the bar, under the slider: a
// tick at each and the range between them once both are set in order.
type loopMarks struct {
	widget.BaseWidget
	t *Timeline
}

func newLoopMarks(t *Timeline) *loopMarks {
	m := &loopMarks{t: t}
	m.ExtendBaseWidget(m)
	return m
}

func (m *loopMarks) CreateRenderer() fyne.WidgetRenderer {
	r := &loopMarksRenderer{m: m, span: canvas.NewRectangle(nil), in: canvas.NewRectangle(nil), out: canvas.NewRectangle(nil)}
	r.Refresh()
	return r
}

type loopMarksRenderer struct {
	m             *loopMarks
	span, in, out *canvas.Rectangle
}

// markWidth is a tick's width: thin enough to point at one frame, wide
// enough to see beside the track.
const markWidth = 2

func (r *loopMarksRenderer) Layout(size fyne.Size) {
	t, s := r.m.t, r.m.t.slider
	tick := func(rect *canvas.Rectangle, at int) {
		if at < 0 {
			rect.Hide()
			return
		}
		rect.Move(fyne.NewPos(trackX(s, float64(at), size.Width)-markWidth/2, 0))
		rect.Resize(fyne.NewSize(markWidth, size.Height))
		rect.Show()
	}
	tick(r.in, t.in)
	tick(r.out, t.out)
	lo, hi, ok := t.loop()
	if !ok {
		r.span.Hide()
		return
	}
	x0, x1 := trackX(s, float64(lo), size.Width), trackX(s, float64(hi), size.Width)
	r.span.Move(fyne.NewPos(x0, size.Height/4))
	r.span.Resize(fyne.NewSize(x1-x0, size.Height/2))
	r.span.Show()
}

func (r *loopMarksRenderer) MinSize() fyne.Size { return fyne.NewSize(0, 0) }

func (r *loopMarksRenderer) Refresh() {
	th := r.m.Theme()
	v := fyne.CurrentApp().Settings().ThemeVariant()
	r.span.FillColor = th.Color(theme.ColorNameSelection, v)
	r.in.FillColor = th.Color(theme.ColorNamePrimary, v)
	r.out.FillColor = r.in.FillColor
	r.Layout(r.m.Size())
	for _, o := range r.Objects() {
		o.Refresh()
	}
}

func (r *loopMarksRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.span, r.in, r.out}
}

func (r *loopMarksRenderer) Destroy() {}
