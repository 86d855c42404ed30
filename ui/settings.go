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

// parseMemoryGB reads the budget field: empty is this Mac's budget.
func parseMemoryGB(text string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(strings.ToUpper(text)), "GB"))
	if t == "" {
		return 0, nil
	}
	gb, err := strconv.ParseFloat(t, 64)
	if err != nil || !(gb > 0) || gb > 4096 {
		return 0, errors.New("the memory budget must be a number of GB above zero, such as 48 or 0.5, or empty for this Mac's own budget")
	}
	return gb, nil
}

// ShowSettings opens the settings: the model snapshot folder (empty: the
// embedded tiny model, "Get MiniMax-H3…" downloads one), the folder finished clips go to and the memory
// budget override. A wrong model folder is reported by the live plan in
// one sentence, like any other problem with the request.
func (s *Studio) ShowSettings() {
	model := widget.NewEntry()
	model.SetPlaceHolder("empty: the embedded tiny model")
	model.SetText(s.model)
	out := widget.NewEntry()
	out.SetText(s.cfg.OutputDir)
	mem := widget.NewEntry()
	mem.SetPlaceHolder("empty: this Mac's budget")
	if mc, err := app.LookupMachine(s.cfg.Machine); err == nil {
		mem.SetPlaceHolder("empty: this Mac's budget, " + app.GBText(mc.Budget()))
	}
	if s.memoryGB > 0 {
		mem.SetText(strconv.FormatFloat(s.memoryGB, 'f', -1, 64))
	}
	browse := func(e *widget.Entry, title string) *widget.Button {
		return widget.NewButton("Choose…", func() { s.pickFolder(title, func(d string) { e.SetText(d) }) })
	}
	get := widget.NewButton("Get MiniMax-H3…", func() { s.ShowGetModel(model.SetText) })
	form := widget.NewForm(
		widget.NewFormItem("Model snapshot", container.NewBorder(nil, nil, nil, browse(model, "Choose the MiniMax-H3 snapshot folder"), model)),
		widget.NewFormItem("", container.NewHBox(get)),
		widget.NewFormItem("Save clips in", container.NewBorder(nil, nil, nil, browse(out, "Choose where clips are saved"), out)),
		widget.NewFormItem("Memory budget", container.NewBorder(nil, nil, nil, widget.NewLabel("GB"), mem)),
	)
	d := dialog.NewCustomConfirm("Settings", "Save", "Cancel", form, func(ok bool) {
		if !ok {
			return
		}
		if st, err := os.Stat(out.Text); err != nil || !st.IsDir() {
			dialog.ShowError(errors.New("the folder for clips does not exist; choose an existing folder"), s.win)
			return
		}
		gb, err := parseMemoryGB(mem.Text)
		if err != nil {
			dialog.ShowError(err, s.win)
			return
		}
		s.model = model.Text
		s.cfg.OutputDir = out.Text
		s.setMemoryGB(gb)
		p := s.app.Preferences()
		p.SetString(prefModel, s.model)
		p.SetString(prefOutput, s.cfg.OutputDir)
		p.SetFloat(prefMemoryGB, gb)
		s.edited()
	}, s.win)
	d.Resize(fyne.NewSize(640, 300))
	s.settings = &settingsForm{dlg: d, model: model, out: out, mem: mem, get: get}
	d.Show()
}

// settingsForm is the settings dialog last opened; tests fill it in.
type settingsForm struct {
	dlg             *dialog.ConfirmDialog
	model, out, mem *widget.Entry
	get             *widget.Button
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
