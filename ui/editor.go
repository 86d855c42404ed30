package ui

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
)

// promptTemplate is the structured prompt the model card recommends, one
// click away from an empty editor.
const promptTemplate = "Scene: \nAction: \nCamera: \nLook: \nAudio: "

// Length units of the duration field.
const (
	unitSeconds = "seconds"
	unitFrames  = "frames"
)

// editor holds the request fields other than the references.
type editor struct {
	prompt   *promptEntry
	template *widget.Button
	width    *widget.Entry
	height   *widget.Entry
	length   *widget.Entry
	unit     *widget.Select
	aligned  *widget.Label
	seed     *widget.Entry
	dice     *tipButton
	preset   *widget.Select
	steps    *widget.Entry
	layers   *widget.Entry
	reuse    *widget.Entry
	// videoShift and audioShift are the sigma shifts (empty: the
	// preset's, which is the model's unless Turbo).
	videoShift *widget.Entry
	audioShift *widget.Entry
	advanced   *widget.Accordion
	loras      *loraList
	// turboHeld is set while the Turbo preset the user chose is away only
	// because its LoRA is (for now) at strength 0: it comes back with it.
	turboHeld bool
	// defaults are the active model's (its canvas, length and presets).
	// canvasDefault and lengthDefault hold while those fields show them,
	// so another model's defaults replace them, but never what the user
	// typed or a restored request brought.
	defaults                     app.Defaults
	canvasDefault, lengthDefault bool
}

// turboTitle is the Turbo preset as the picker shows it.
var turboTitle = presetTitle(app.TurboPreset)

// presetTitle is a preset's name as the picker shows it ("Balanced").
func presetTitle(name string) string {
	if name == "" {
		return ""
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

func newEditor(changed func(), tips *tipLayer) *editor {
	e := &editor{defaults: app.ReleaseDefaults}
	e.prompt = newPromptEntry()
	e.prompt.SetPlaceHolder("Describe the clip: what happens, how it is filmed, what it sounds like")
	e.prompt.SetMinRowsVisible(4)
	e.template = widget.NewButtonWithIcon("Template", theme.DocumentCreateIcon(), func() {
		if p := withTemplate(e.prompt.Text); p != e.prompt.Text {
			e.prompt.SetText(p)
		}
	})
	e.width, e.height, e.length = widget.NewEntry(), widget.NewEntry(), widget.NewEntry()
	e.unit = widget.NewSelect([]string{unitSeconds, unitFrames}, nil)
	e.showDefaults()
	e.aligned = widget.NewLabel("")
	e.aligned.Wrapping = fyne.TextWrapWord // the rounding's reason is a sentence
	e.seed = widget.NewEntry()
	e.seed.SetText("42")
	e.dice = newTipButton(theme.ViewRefreshIcon(), "New random seed", tips, func() {
		e.seed.SetText(strconv.FormatInt(rand.Int64N(1<<31), 10))
	})
	e.preset = widget.NewSelect(nil, nil) // updatePresets offers the model's
	e.steps, e.layers, e.reuse = widget.NewEntry(), widget.NewEntry(), widget.NewEntry()
	e.steps.SetPlaceHolder("preset's")
	e.layers.SetPlaceHolder("preset's (35-50 DiT blocks)")
	e.reuse.SetPlaceHolder("preset's (reuse the model's output every k steps)")
	e.videoShift, e.audioShift = widget.NewEntry(), widget.NewEntry()
	e.advanced = widget.NewAccordion(widget.NewAccordionItem("Advanced",
		widget.NewForm(widget.NewFormItem("Steps", e.steps), widget.NewFormItem("Layers", e.layers), widget.NewFormItem("Reuse", e.reuse),
			widget.NewFormItem("Video shift", e.videoShift), widget.NewFormItem("Audio shift", e.audioShift))))
	e.loras = newLoRAList(changed, tips)
	e.updatePresets()

	// Handlers go on last so setting the defaults above plans nothing.
	for _, en := range []*widget.Entry{&e.prompt.Entry, e.seed, e.steps, e.layers, e.reuse, e.videoShift, e.audioShift} {
		en.OnChanged = func(string) { changed() }
	}
	e.width.OnChanged = func(string) { e.canvasDefault = false; changed() }
	e.height.OnChanged = e.width.OnChanged
	e.length.OnChanged = func(string) { e.lengthDefault = false; changed() }
	e.unit.OnChanged = func(string) { e.lengthDefault = false; changed() }
	e.preset.OnChanged = func(string) { changed() }
	e.updateAligned()
	return e
}

func (e *editor) view() fyne.CanvasObject {
	size := container.NewBorder(nil, nil, nil, widget.NewLabel("px"),
		container.NewGridWithColumns(3, e.width, widget.NewLabel("×"), e.height))
	length := container.NewBorder(nil, nil, nil, e.unit, e.length)
	seed := container.NewBorder(nil, nil, nil, e.dice, e.seed)
	form := widget.NewForm(
		widget.NewFormItem("Canvas", size),
		widget.NewFormItem("Length", length),
		widget.NewFormItem("", e.aligned),
		widget.NewFormItem("Seed", seed),
		widget.NewFormItem("Preset", e.preset),
	)
	head := container.NewBorder(nil, nil, widget.NewLabelWithStyle("Prompt", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}), e.template)
	return container.NewVBox(head, e.prompt, form, e.loras.box, e.advanced)
}

// withTemplate is the prompt with the template's headings it lacks added
// at the end: pressed twice, or over a filled-in block, it adds nothing,
// since a repeated heading is only read twice by the model.
func withTemplate(p string) string {
	if strings.TrimSpace(p) == "" {
		return promptTemplate
	}
	lines := strings.Split(p, "\n")
	var missing []string
	for _, t := range strings.Split(promptTemplate, "\n") {
		head := strings.TrimSpace(t)
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), head) }) {
			missing = append(missing, t)
		}
	}
	if len(missing) == 0 {
		return p
	}
	return p + "\n" + strings.Join(missing, "\n")
}

// defaultPreset is the preset the picker starts on, and falls back to.
const defaultPreset = "Default"

// defaultSeconds is the window's length for a model that declares none.
const defaultSeconds = "2"

// showDefaults puts the model's canvas and length in their fields: the
// declared frames, else the window's two seconds.
func (e *editor) showDefaults() {
	d := e.defaults
	e.width.SetText(strconv.Itoa(d.Width))
	e.height.SetText(strconv.Itoa(d.Height))
	if d.Declared {
		e.unit.SetSelected(unitFrames)
		e.length.SetText(strconv.Itoa(d.Frames))
	} else {
		e.unit.SetSelected(unitSeconds)
		e.length.SetText(defaultSeconds)
	}
	e.canvasDefault, e.lengthDefault = true, true
}

// setDefaults makes d the model's defaults: fields that still show the
// previous model's take d's, and the picker offers d's presets.
func (e *editor) setDefaults(d app.Defaults) {
	canvas, length := e.canvasDefault, e.lengthDefault
	width, height, unit, text := e.width.Text, e.height.Text, e.unit.Selected, e.length.Text
	e.defaults = d
	e.showDefaults()
	if !canvas {
		e.width.SetText(width)
		e.height.SetText(height)
	}
	if !length {
		e.unit.SetSelected(unit)
		e.length.SetText(text)
	}
	e.canvasDefault, e.lengthDefault = canvas, length
	e.updatePresets()
}

// fill sets the fields of r into the editor (restoring a past request).
func (e *editor) fill(r app.Request) {
	// What the request sets is no longer the model's default; what it
	// leaves keeps its state (the field edits below clear both flags).
	canvas := e.canvasDefault && (r.Width <= 0 || r.Height <= 0)
	length := e.lengthDefault && r.Seconds <= 0 && r.Frames <= 0
	defer func() { e.canvasDefault, e.lengthDefault = canvas, length }()
	e.prompt.SetText(r.Prompt)
	if r.Width > 0 && r.Height > 0 {
		e.width.SetText(strconv.Itoa(r.Width))
		e.height.SetText(strconv.Itoa(r.Height))
	}
	switch {
	case r.Seconds > 0:
		e.unit.SetSelected(unitSeconds)
		e.length.SetText(strconv.FormatFloat(r.Seconds, 'f', -1, 64))
	case r.Frames > 0:
		e.unit.SetSelected(unitFrames)
		e.length.SetText(strconv.Itoa(r.Frames))
	}
	e.seed.SetText(strconv.FormatInt(r.Seed, 10))
	// The adapters first: a Turbo preset is offered only with its LoRA.
	e.loras.fill(r.LoRAs)
	e.updatePresets()
	if r.Preset != "" {
		e.preset.SetSelected(presetTitle(strings.ToLower(r.Preset)))
	}
	p := presetNamed(e.defaults.Presets, r.Preset)
	if t, ok := r.TurboLoRA(); ok && strings.EqualFold(r.Preset, app.TurboPreset) {
		p.Steps = t.Steps
	}
	knob := func(en *widget.Entry, v, preset int) {
		if v > 0 && v != preset {
			en.SetText(strconv.Itoa(v))
		} else {
			en.SetText("")
		}
	}
	knob(e.steps, r.Steps, p.Steps)
	knob(e.layers, r.Layers, p.Layers)
	knob(e.reuse, r.Reuse, p.Reuse)
	shift := func(en *widget.Entry, v float64) {
		if v > 0 {
			en.SetText(strconv.FormatFloat(v, 'f', -1, 64))
		} else {
			en.SetText("")
		}
	}
	shift(e.videoShift, r.VideoShift)
	shift(e.audioShift, r.AudioShift)
}

// updatePresets offers the Turbo preset while a Turbo LoRA is listed and
// on (app.Request.TurboLoRA), falling back to Default when it goes, and
// shows the steps and shifts the chosen preset gives the empty fields.
// The picker's own change handler is held meanwhile: this is no edit.
func (e *editor) updatePresets() {
	ls, _ := e.loras.loras() // a bad strength field is the request's error
	req := app.Request{LoRAs: ls}
	t, turbo := req.TurboLoRA()
	var names []string
	for _, p := range e.defaults.Presets {
		names = append(names, presetTitle(p.Name))
	}
	if turbo {
		names = append(names, turboTitle)
	}
	if !slices.Equal(names, e.preset.Options) {
		e.preset.SetOptions(names)
	}
	switch {
	case !slices.Contains(names, e.preset.Selected) && e.preset.Selected != turboTitle:
		// The model offers no preset of that name (another model's).
		e.selectQuietly(e.fallbackPreset())
	case !turbo && e.preset.Selected == turboTitle:
		e.selectQuietly(e.fallbackPreset())
		e.turboHeld = len(ls) > 0 // a LoRA turned off, not removed
	case turbo && e.turboHeld && e.preset.Selected == defaultPreset:
		e.selectQuietly(turboTitle)
		e.turboHeld = false
	case e.preset.Selected != defaultPreset || len(ls) == 0:
		e.turboHeld = false // another choice, or nothing left to come back with
	}
	e.loras.setHint(app.TurboText(req))
	if turbo && e.preset.Selected == turboTitle {
		e.steps.SetPlaceHolder(app.TurboFieldText(float64(t.Steps)))
		e.videoShift.SetPlaceHolder(app.TurboFieldText(t.VideoShift))
		e.audioShift.SetPlaceHolder(app.TurboFieldText(t.AudioShift))
		return
	}
	e.steps.SetPlaceHolder("preset's")
	e.videoShift.SetPlaceHolder("model's")
	e.audioShift.SetPlaceHolder("model's")
}

// fallbackPreset is the picker's choice when its preset is not offered:
// Default, or the model's first preset if it has no Default.
func (e *editor) fallbackPreset() string {
	if presetNamed(e.defaults.Presets, defaultPreset).Name != "" || len(e.defaults.Presets) == 0 {
		return defaultPreset
	}
	return presetTitle(e.defaults.Presets[0].Name)
}

// selectQuietly picks a preset without the picker's change handler: the
// window's own adjustment is no edit.
func (e *editor) selectQuietly(title string) {
	onChanged := e.preset.OnChanged
	e.preset.OnChanged = nil
	e.preset.SetSelected(title)
	e.preset.OnChanged = onChanged
}

// presetNamed is the preset of that name among presets (the zero Preset
// if none).
func presetNamed(presets []app.Preset, name string) app.Preset {
	for _, p := range presets {
		if strings.EqualFold(p.Name, name) {
			return p
		}
	}
	return app.Preset{}
}

// apply reads the editor into r. Field errors come back together, each in
// words that say which field and what to type.
func (e *editor) apply(r *app.Request) error {
	var errs []error
	num := func(field, s string) int {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be a whole number of pixels above zero", field))
			return 0
		}
		return v
	}
	r.Prompt = e.prompt.Text
	r.Width, r.Height = num("width", e.width.Text), num("height", e.height.Text)
	ls := strings.TrimSpace(e.length.Text)
	if e.unit.Selected == unitFrames {
		if v, err := strconv.Atoi(ls); err == nil && v > 0 {
			r.Frames = v
		} else {
			errs = append(errs, errors.New("length must be a whole number of frames above zero"))
		}
	} else if v, err := strconv.ParseFloat(ls, 64); err == nil && v > 0 {
		r.Seconds = v
	} else {
		errs = append(errs, errors.New("length must be a number of seconds above zero, such as 2 or 0.5"))
	}
	if v, err := strconv.ParseInt(strings.TrimSpace(e.seed.Text), 10, 64); err == nil {
		r.Seed = v
	} else {
		errs = append(errs, errors.New("seed must be a whole number; press the dice for a random one"))
	}
	r.Preset = strings.ToLower(e.preset.Selected)
	loras, err := e.loras.loras()
	r.LoRAs = loras
	if err != nil {
		errs = append(errs, err)
	}
	for _, k := range []struct {
		name string
		en   *widget.Entry
		dst  *float64
	}{{"video shift", e.videoShift, &r.VideoShift}, {"audio shift", e.audioShift, &r.AudioShift}} {
		if st := strings.TrimSpace(k.en.Text); st != "" {
			if v, err := strconv.ParseFloat(st, 64); err == nil && v > 0 {
				*k.dst = v
			} else {
				errs = append(errs, fmt.Errorf("%s must be a number above zero, such as 12, or empty for the preset's", k.name))
			}
		}
	}
	for _, k := range []struct {
		name string
		en   *widget.Entry
		dst  *int
	}{{"steps", e.steps, &r.Steps}, {"layers", e.layers, &r.Layers}, {"reuse", e.reuse, &r.Reuse}} {
		if st := strings.TrimSpace(k.en.Text); st != "" {
			if v, err := strconv.Atoi(st); err == nil && v > 0 {
				*k.dst = v
			} else {
				errs = append(errs, fmt.Errorf("%s must be a whole number above zero, or empty for the preset's", k.name))
			}
		}
	}
	return errors.Join(errs...)
}

// updateAligned shows the frame count the model will actually make and the
// clip's length (app.LengthText).
func (e *editor) updateAligned() {
	var r app.Request
	if err := e.apply(&r); err != nil || r.RequestedFrames() <= 0 {
		e.aligned.SetText("")
		return
	}
	e.aligned.SetText(app.LengthText(r.RequestedFrames()))
}
