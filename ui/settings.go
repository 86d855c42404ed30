package ui

import (
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"
	"github.com/ncruces/zenity"

	"h3studio/app"
)

// Preference keys.
const (
	prefModel       = "model_dir"
	prefOutput      = "output_dir"
	prefLastRequest = "last_request"
	prefMemoryGB    = "memory_gb"
)

// loadPrefs applies the remembered model and output folders, and puts the
// last rendered request back into the editor.
func (s *Studio) loadPrefs() {
	p := s.app.Preferences()
	s.model = p.String(prefModel)
	s.setMemoryGB(p.Float(prefMemoryGB))
	if d := p.String(prefOutput); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			s.cfg.OutputDir = d
		}
	}
	if raw := p.String(prefLastRequest); raw != "" {
		var r app.Request
		if json.Unmarshal([]byte(raw), &r) == nil {
			s.restore(r, app.LastRequestBackText)
		}
	}
}

// rememberRequest keeps the request just rendered for the next start.
func (s *Studio) rememberRequest(r app.Request) {
	r.Output = ""
	if raw, err := json.Marshal(r); err == nil {
		s.app.Preferences().SetString(prefLastRequest, string(raw))
	}
}

// setMemoryGB applies a memory budget override (0: this Mac's own) to the
// plans and renders prepared from now on.
func (s *Studio) setMemoryGB(gb float64) {
	s.memoryGB = gb
	if s.cfg.SetMemoryGB != nil {
		s.cfg.SetMemoryGB(gb)
	}
	s.plan.overridden = gb > 0
}

// parseMemoryGB reads the budget field: empty is this machine's budget.
func parseMemoryGB(text string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.ToUpper(text)), "GB"))
	if t == "" {
		return 0, nil
	}
	gb, err := strconv.ParseFloat(t, 64)
	if err != nil || !(gb > 0) || gb > 4096 {
		return 0, errors.New(app.BadMemoryBudgetText)
	}
	return gb, nil
}

// ShowSettings opens the settings: the model snapshot folder (empty: the
// built-in demo model, "Get MiniMax-H3…" downloads one), the folder
// finished clips go to and the memory budget override. Save checks every
// field first, the model folder as the CLI's -d is checked; a bad one is
// named in one sentence under the fields and the dialog stays open with
// what was typed.
func (s *Studio) ShowSettings() {
	f := &settingsForm{model: widget.NewEntry(), out: widget.NewEntry(), mem: widget.NewEntry(), problem: widget.NewLabel("")}
	f.model.SetPlaceHolder(app.NoModelFolderText)
	f.model.SetText(s.model)
	f.out.SetText(s.cfg.OutputDir)
	if mc, err := app.LookupMachine(s.cfg.Machine); err == nil {
		f.mem.SetPlaceHolder(app.OwnBudgetText(mc))
	}
	if s.memoryGB > 0 {
		f.mem.SetText(strconv.FormatFloat(s.memoryGB, 'f', -1, 64))
	}
	f.problem.Wrapping = fyne.TextWrapWord
	browse := func(e *widget.Entry, title string) *widget.Button {
		return widget.NewButton("Choose…", func() { s.pickFolder(title, func(d string) { e.SetText(d) }) })
	}
	f.get = widget.NewButton("Get MiniMax-H3…", func() { s.ShowGetModel(f.model.SetText) })
	form := widget.NewForm(
		widget.NewFormItem("Model snapshot", container.NewBorder(nil, nil, nil, browse(f.model, "Choose the MiniMax-H3 snapshot folder"), f.model)),
		widget.NewFormItem("", container.NewHBox(f.get)),
		widget.NewFormItem("Save clips in", container.NewBorder(nil, nil, nil, browse(f.out, "Choose where clips are saved"), f.out)),
		widget.NewFormItem("Memory budget", container.NewBorder(nil, nil, nil, widget.NewLabel("GB"), f.mem)),
	)
	f.body = container.NewVBox(form, f.problem)
	f.dlg = dialog.NewCustomWithoutButtons("Settings", f.body, s.win)
	f.save = widget.NewButton("Save", func() { s.saveSettings(f) })
	f.save.Importance = widget.HighImportance
	f.dlg.SetButtons([]fyne.CanvasObject{widget.NewButton("Cancel", func() { f.closed = true; f.dlg.Hide() }), f.save})
	f.dlg.Resize(fyne.NewSize(640, 380)) // room for a two-line reason
	s.settings = f
	f.dlg.Show()
}

// saveSettings applies the dialog's fields once all are good. The model
// folder is opened off the UI goroutine (it reads the snapshot's index).
func (s *Studio) saveSettings(f *settingsForm) {
	if st, err := os.Stat(f.out.Text); err != nil || !st.IsDir() {
		f.refuse(app.NoClipFolderText)
		return
	}
	gb, err := parseMemoryGB(f.mem.Text)
	if err != nil {
		f.refuse(err.Error())
		return
	}
	model, out := strings.TrimSpace(f.model.Text), f.out.Text
	f.save.Disable()
	f.say(widget.MediumImportance, app.CheckingModelText)
	s.spawn(func() {
		err := app.CheckModelFolder(model)
		s.cfg.Exec.Do(func() {
			f.save.Enable()
			if f.closed {
				return // canceled while the folder was checked
			}
			if err != nil {
				f.refuse(app.Advice(err))
				return
			}
			f.closed = true
			f.dlg.Hide()
			s.applySettings(model, out, gb)
		})
	})
}

// applySettings makes checked settings the window's and remembers them.
func (s *Studio) applySettings(model, out string, gb float64) {
	if model != s.model {
		// The listed LoRAs' coverage lines, and the defaults, were of the
		// other model.
		clear(s.ed.loras.coverage)
		defer s.checkLoRAs()
		defer s.loadDefaults()
	}
	s.model = model
	s.cfg.OutputDir = out
	s.setMemoryGB(gb)
	p := s.app.Preferences()
	p.SetString(prefModel, s.model)
	p.SetString(prefOutput, s.cfg.OutputDir)
	p.SetFloat(prefMemoryGB, gb)
	s.edited()
}

// settingsForm is the settings dialog last opened; tests fill it in.
type settingsForm struct {
	dlg             *dialog.CustomDialog
	model, out, mem *widget.Entry
	get, save       *widget.Button
	// problem is why Save did not close the dialog, under the fields
	// (body) and empty until then.
	problem *widget.Label
	body    *fyne.Container
	// closed is set once the dialog was saved or canceled.
	closed bool
}

// refuse keeps the dialog open with why under the fields.
func (f *settingsForm) refuse(why string) { f.say(widget.DangerImportance, why) }

// say shows text under the fields; the form is laid out again, as a
// label that grows a line does not move what is around it.
func (f *settingsForm) say(imp widget.Importance, text string) {
	f.problem.Importance = imp
	f.problem.SetText(text)
	f.body.Refresh()
}

// pickFolder asks for a folder with the native dialog where there is one.
func (s *Studio) pickFolder(title string, done func(string)) {
	if !zenity.IsAvailable() {
		dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
			if err == nil && u != nil {
				done(u.Path())
			}
		}, s.win)
		return
	}
	s.spawn(func() {
		dir, err := zenity.SelectFile(zenity.Title(title), zenity.Directory())
		if err != nil || dir == "" {
			return
		}
		s.cfg.Exec.Do(func() { done(dir) })
	})
}
