package ui

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
	"h3studio/media"
)

// refItem is one reference file as the lists show it.
type refItem struct {
	Path string
	Info media.Info
	// Kind is the request kind: a clip with a soundtrack is used with its
	// sound unless the user turns it off.
	Kind  string
	Thumb image.Image
}

// refList is one ordered list of references of a kind (pictures, videos
// or audio), labelled as app names them.
type refList struct {
	title  string
	kind   string // app.RefImage, app.RefVideo or app.RefAudio
	items  []*refItem
	box    *fyne.Container
	header *widget.Label
	// changed is called after every edit, on the UI goroutine.
	changed func()
	tips    *tipLayer // the row buttons' tooltips (the studio's)
}

func newRefList(title, kind string, changed func()) *refList {
	l := &refList{title: title, kind: kind, changed: changed}
	l.header = widget.NewLabelWithStyle(title, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.box = container.NewVBox()
	l.rebuild()
	return l
}

func (l *refList) add(it *refItem) {
	l.items = append(l.items, it)
	l.rebuild()
	l.changed()
}

func (l *refList) move(i, delta int) {
	j := i + delta
	if j < 0 || j >= len(l.items) {
		return
	}
	l.items[i], l.items[j] = l.items[j], l.items[i]
	l.rebuild()
	l.changed()
}

// moveTo moves item i to place j (clamped to the list), the others
// keeping their order.
func (l *refList) moveTo(i, j int) {
	j = max(0, min(j, len(l.items)-1))
	if i == j || i < 0 || i >= len(l.items) {
		return
	}
	it := l.items[i]
	l.items = append(l.items[:i], l.items[i+1:]...)
	l.items = append(l.items[:j], append([]*refItem{it}, l.items[j:]...)...)
	l.rebuild()
	l.changed()
}

func (l *refList) remove(i int) {
	l.items = append(l.items[:i], l.items[i+1:]...)
	l.rebuild()
	l.changed()
}

func (l *refList) clear() {
	l.items = nil
	l.rebuild()
	l.changed()
}

// labelOf is item i's name in the list and in every message: "Picture 2".
func (l *refList) labelOf(i int) string { return app.RefLabel(l.kind, i+1) }

// rebuild recreates the rows; lists are short (the model takes at most
// 12 references), so rebuilding is simpler than diffing and cheap.
func (l *refList) rebuild() {
	rows := []fyne.CanvasObject{l.header}
	if len(l.items) == 0 {
		rows = append(rows, widget.NewLabel("none"))
	}
	for i, it := range l.items {
		rows = append(rows, l.row(i, it))
	}
	l.box.Objects = rows
	l.box.Refresh()
}

func (l *refList) row(i int, it *refItem) fyne.CanvasObject {
	th := canvas.NewImageFromImage(it.Thumb)
	th.FillMode = canvas.ImageFillContain
	th.SetMinSize(fyne.NewSize(56, 40))
	name := widget.NewLabelWithStyle(l.labelOf(i), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	detail := widget.NewLabel(app.RefFileName(it.Path) + "  " + describeMedia(it.Info))
	detail.Truncation = fyne.TextTruncateEllipsis
	up := newTipButton(theme.MoveUpIcon(), "Move up", l.tips, func() { l.move(i, -1) })
	down := newTipButton(theme.MoveDownIcon(), "Move down", l.tips, func() { l.move(i, 1) })
	del := newTipButton(theme.DeleteIcon(), "Remove (Undo brings it back)", l.tips, func() { l.remove(i) })
	up.Importance, down.Importance, del.Importance = widget.LowImportance, widget.LowImportance, widget.LowImportance
	if i == 0 {
		up.Disable()
	}
	if i == len(l.items)-1 {
		down.Disable()
	}
	buttons := container.NewHBox(up, down, del)
	var extra fyne.CanvasObject
	if it.Info.Kind == media.KindVideoAudio {
		// A clip's own soundtrack goes to the model unless turned off.
		sound := widget.NewCheck("sound", func(on bool) {
			want := app.RefVideo
			if on {
				want = app.RefVideoAudio
			}
			if it.Kind != want {
				it.Kind = want
				l.changed()
			}
		})
		sound.SetChecked(it.Kind == app.RefVideoAudio)
		extra = sound
	}
	right := container.NewHBox(buttons)
	if extra != nil {
		right = container.NewHBox(extra, buttons)
	}
	content := container.NewBorder(nil, nil, th, nil,
		container.NewVBox(container.NewBorder(nil, nil, name, right), detail))
	return newDragRow(content, func(rows int) { l.moveTo(i, i+rows) })
}

// dragRow is a list row the user can drag up or down to reorder the list:
// on release it moves by the number of row heights dragged. Its buttons
// still take taps; only a drag reaches the row.
type dragRow struct {
	widget.BaseWidget
	content fyne.CanvasObject
	dy      float32
	moved   func(rows int)
}

func newDragRow(content fyne.CanvasObject, moved func(rows int)) *dragRow {
	r := &dragRow{content: content, moved: moved}
	r.ExtendBaseWidget(r)
	return r
}

func (r *dragRow) CreateRenderer() fyne.WidgetRenderer { return widget.NewSimpleRenderer(r.content) }

func (r *dragRow) Dragged(e *fyne.DragEvent) { r.dy += e.Dragged.DY }

func (r *dragRow) DragEnd() {
	h := r.Size().Height
	rows := 0
	if h > 0 {
		rows = int(math.Round(float64(r.dy / h)))
	}
	r.dy = 0
	if rows != 0 {
		r.moved(rows)
	}
}

// describeMedia is the size and length of a reference in a few words.
func describeMedia(in media.Info) string {
	switch in.Kind {
	case media.KindImage:
		return fmt.Sprintf("%dx%d", in.Width, in.Height)
	case media.KindVideo, media.KindVideoAudio:
		s := fmt.Sprintf("%dx%d, %.1f s", in.Width, in.Height, in.DurationS)
		if in.HasAudio() {
			s += ", with sound"
		}
		return s
	case media.KindAudio:
		return fmt.Sprintf("%.1f s audio", in.DurationS)
	}
	return in.Kind
}

// loadRef reads a dropped or chosen file through app's check (the one its
// plan makes of it on its own) and makes its thumbnail; want is a restored
// reference's kind. It runs off the UI goroutine (FFprobe and a frame
// decode take tens of ms). Its error is the *app.RefRejectedError that
// says why the file is not added.
func loadRef(ctx context.Context, path, want string) (*refItem, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ref, info, err := app.AddableReference(ctx, path, want) // fills the cache the re-plans read
	if err != nil {
		return nil, err
	}
	it := &refItem{Path: path, Info: info, Kind: ref.Kind}
	if th, err := app.Thumbnail(ctx, path, app.ThumbSide); err == nil {
		it.Thumb = th
	} else {
		// A file the model can read but FFmpeg cannot draw is still a
		// reference; its row keeps its place without a picture.
		it.Thumb = image.NewUniform(color.Transparent)
	}
	return it, nil
}

// readyRef is loadRef answered from app's caches at once, for a file read
// before and unchanged since; false when the file must be read again.
func readyRef(ctx context.Context, path, want string) (*refItem, bool) {
	ref, info, th, ok := app.ReadyReference(ctx, path, want)
	if !ok {
		return nil, false
	}
	return &refItem{Path: path, Info: info, Kind: ref.Kind, Thumb: th}, true
}
