package ui

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/ncruces/zenity"

	"h3studio/app"
)

// The strength slider spans the range adapters are used in (they are
// trained for 1; ComfyUI users seldom go past 2); the field beside it
// takes the whole range the CLI does, app.MaxLoRAStrength.
const (
	sliderStrength = 2.0
	strengthStep   = 0.05
)

// loraExt is the one file type adapters come in.
const loraExt = ".safetensors"

// loraItem is one adapter as the window lists it. It is a value, so the
// undo history's copies keep the strength each step had.
type loraItem struct {
	Path     string
	Strength float64
	QKV      string // a restored request's row order ("" auto)
	// SHA256 is the digest a restored request recorded for the file (""
	// for one added here): the coverage line says when the file changed.
	SHA256 string
	// Typed is the strength field's text while it holds no number in
	// range ("" otherwise); the request reports it.
	Typed string
}

// coverageLine is what the row's second line says: the adapter's
// coverage, or why it does not fit (a restored adapter checked after it
// was listed).
type coverageLine struct {
	text   string
	misfit bool
}

// loraList is the editor's LoRA section: the adapters the request stacks,
// in order, each with a strength slider and field and a Remove button.
type loraList struct {
	items []loraItem
	// coverage is each file's line, by path: it belongs to the file, not
	// to an undo step.
	coverage map[string]coverageLine
	box      *fyne.Container
	header   *fyne.Container
	addBtn   *widget.Button
	// hint is the Turbo preset's offer ("" while no Turbo LoRA is on).
	hint *widget.Label
	// changed is called after every edit, on the UI goroutine.
	changed func()
	tips    *tipLayer
	// syncing is set while the slider and the field copy each other.
	syncing bool
}

func newLoRAList(changed func(), tips *tipLayer) *loraList {
	l := &loraList{changed: changed, tips: tips, coverage: map[string]coverageLine{}}
	l.addBtn = widget.NewButtonWithIcon("Add LoRA…", theme.ContentAddIcon(), nil)
	l.header = container.NewBorder(nil, nil, widget.NewLabelWithStyle("LoRAs", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), l.addBtn)
	l.hint = widget.NewLabel("")
	l.hint.Wrapping = fyne.TextWrapWord
	l.hint.Hide()
	l.box = container.NewVBox()
	l.rebuild()
	return l
}

// setHint shows the Turbo preset's offer ("" hides it). The rows stay as
// they are: a slider being dragged through 0 must not be replaced.
func (l *loraList) setHint(text string) {
	if text == l.hint.Text {
		return
	}
	l.hint.SetText(text)
	if text == "" {
		l.hint.Hide()
	} else {
		l.hint.Show()
	}
	l.box.Refresh()
}

// rebuild recreates the rows (a few adapters at most).
func (l *loraList) rebuild() {
	rows := []fyne.CanvasObject{l.header}
	for i := range l.items {
		rows = append(rows, l.row(i))
	}
	l.box.Objects = append(rows, l.hint)
	l.box.Refresh()
}

func (l *loraList) row(i int) fyne.CanvasObject {
	it := l.items[i]
	name := widget.NewLabelWithStyle(app.RefFileName(it.Path), fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	name.Truncation = fyne.TextTruncateEllipsis
	cov := widget.NewLabel(l.coverage[it.Path].text)
	cov.Wrapping = fyne.TextWrapWord
	if l.coverage[it.Path].misfit {
		cov.Importance = widget.DangerImportance
	}
	slider := widget.NewSlider(-sliderStrength, sliderStrength)
	slider.Step = strengthStep
	slider.SetValue(max(-sliderStrength, min(sliderStrength, it.Strength)))
	field := widget.NewEntry()
	field.SetText(strengthText(it))
	slider.OnChanged = func(v float64) { l.slid(i, v, field) }
	field.OnChanged = func(text string) { l.typed(i, text, slider) }
	del := newTipButton(theme.DeleteIcon(), "Remove (Undo brings it back)", l.tips, func() { l.remove(i) })
	del.Importance = widget.LowImportance
	strength := container.NewBorder(nil, nil, nil, container.NewGridWrap(fyne.NewSize(72, field.MinSize().Height), field), slider)
	return container.NewVBox(container.NewBorder(nil, nil, nil, del, name), cov, strength)
}

// strengthText is the field's text for it.
func strengthText(it loraItem) string {
	if it.Typed != "" {
		return it.Typed
	}
	return strconv.FormatFloat(it.Strength, 'f', -1, 64)
}

// slid takes the slider's value for item i; the slider's steps are
// rounded to hundredths, as its float steps drift (0.35000000000000003).
func (l *loraList) slid(i int, v float64, field *widget.Entry) {
	if l.syncing {
		return
	}
	v = math.Round(v*100) / 100
	l.items[i].Strength, l.items[i].Typed = v, ""
	l.syncing = true
	field.SetText(strconv.FormatFloat(v, 'f', -1, 64))
	l.syncing = false
	l.changed()
}

// typed takes the field's text for item i: a number in range moves the
// slider (held at its end beyond ±sliderStrength); anything else is kept
// as typed and reported by the request.
func (l *loraList) typed(i int, text string, slider *widget.Slider) {
	if l.syncing {
		return
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || math.IsNaN(v) || math.Abs(v) > app.MaxLoRAStrength {
		l.items[i].Typed = text
		l.changed()
		return
	}
	l.items[i].Strength, l.items[i].Typed = v, ""
	l.syncing = true
	slider.SetValue(max(-sliderStrength, min(sliderStrength, v)))
	l.syncing = false
	l.changed()
}

func (l *loraList) remove(i int) {
	l.items = slices.Delete(l.items, i, i+1)
	l.rebuild()
	l.changed()
}

// has is whether path is listed already.
func (l *loraList) has(path string) bool {
	return slices.ContainsFunc(l.items, func(it loraItem) bool { return it.Path == path })
}

// loras is the list as the request carries it; a strength field that
// holds no number in range is an error naming the adapter.
func (l *loraList) loras() ([]app.LoRA, error) {
	var out []app.LoRA
	var errs []error
	for _, it := range l.items {
		if it.Typed != "" {
			errs = append(errs, errors.New(app.BadLoRAStrengthText(app.RefFileName(it.Path))))
		}
		out = append(out, app.LoRA{Path: it.Path, Strength: it.Strength, QKV: it.QKV})
	}
	return out, errors.Join(errs...)
}

// fill replaces the list with a restored request's adapters.
func (l *loraList) fill(ls []app.LoRA) {
	l.items = nil
	for _, x := range ls {
		l.items = append(l.items, loraItem{Path: x.Path, Strength: x.Strength, QKV: x.QKV, SHA256: x.SHA256})
	}
	l.rebuild()
}

// isLoRA is whether a dropped file is an adapter rather than a reference.
func isLoRA(path string) bool { return strings.EqualFold(filepath.Ext(path), loraExt) }

// AddLoRAFiles opens the open dialog for adapter files.
func (s *Studio) AddLoRAFiles() {
	pats := []string{"*" + loraExt, "*" + strings.ToUpper(loraExt)}
	s.pickFiles("Add LoRAs", zenity.FileFilter{Name: "LoRA adapters", Patterns: pats}, []string{loraExt}, s.AddLoRAs)
}

// AddLoRAs checks adapter files against the model off the UI goroutine
// (headers only) and lists those that fit at strength 1, in one undo
// step; the notice says why each other one was not added, in the CLI's
// sentence. A file listed already is not listed twice.
func (s *Studio) AddLoRAs(paths []string) {
	if len(paths) == 0 {
		return
	}
	s.loading++
	s.notice.SetText(app.ReadingText(len(paths)))
	model := s.model
	s.spawn(func() {
		lines := make([]coverageLine, len(paths))
		var misfits []error
		for i, p := range paths {
			cov, err := s.inspectLoRA(model, p)
			if err != nil {
				misfits = append(misfits, err)
			}
			lines[i] = cov
		}
		s.cfg.Exec.Do(func() {
			s.loading--
			l := s.ed.loras
			s.batch(func() {
				for i, p := range paths {
					if lines[i].misfit || l.has(p) {
						continue
					}
					l.coverage[p] = lines[i]
					l.items = append(l.items, loraItem{Path: p, Strength: app.DefaultLoRAStrength})
				}
				l.rebuild()
				s.edited()
			})
			s.notice.SetText(app.Advice(errors.Join(misfits...)))
		})
	})
}

// inspectLoRA is the coverage line of the adapter at path on model, or
// the misfit line and its error. It runs off the UI goroutine.
func (s *Studio) inspectLoRA(model, path string) (coverageLine, error) {
	if s.cfg.LoRACoverage == nil {
		return coverageLine{}, nil
	}
	line, err := s.cfg.LoRACoverage(model, path)
	if err != nil {
		return coverageLine{text: app.Advice(err), misfit: true}, err
	}
	return coverageLine{text: line}, nil
}

// checkLoRAs fills in the coverage lines of listed adapters that have
// none (a restored request's), off the UI goroutine; a misfit stays listed
// with its sentence, as the request names it and its plan refuses it.
func (s *Studio) checkLoRAs() {
	l := s.ed.loras
	var todo []loraItem
	for _, it := range l.items {
		if _, ok := l.coverage[it.Path]; !ok {
			todo = append(todo, it)
		}
	}
	if len(todo) == 0 {
		return
	}
	model := s.model
	s.spawn(func() {
		lines := make([]coverageLine, len(todo))
		for i, it := range todo {
			var err error
			lines[i], err = s.inspectLoRA(model, it.Path) // the line says why
			if err == nil && it.SHA256 != "" {
				if d, derr := app.LoRADigest(it.Path); derr == nil && d != it.SHA256 {
					lines[i].text = app.LoRAChangedText(lines[i].text)
				}
			}
		}
		s.cfg.Exec.Do(func() {
			for i, it := range todo {
				l.coverage[it.Path] = lines[i]
			}
			l.rebuild()
			relayout(s.edScroll)
		})
	})
}
