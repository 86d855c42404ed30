package ui

import (
	"encoding/json"
	"errors"
	"os"

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
)

// loadPrefs applies the remembered model and output folders, and puts the
// last rendered request back into the editor.
func (s *Studio) loadPrefs() {
	p := s.app.Preferences()
	s.model = p.String(prefModel)
	if d := p.String(prefOutput); d != "" {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			s.cfg.OutputDir = d
		}
	}
	if raw := p.String(prefLastRequest); raw != "" {
		var r app.Request
		if json.Unmarshal([]byte(raw), &r) == nil {
			s.Restore(r)
			s.notice.SetText("Your last request is back; drop files to change the references.")
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

// ShowSettings opens the settings: the model snapshot folder (empty: the
// embedded tiny model) and the folder finished clips go to. A wrong model
// folder is reported by the live plan in one sentence, like any other
// problem with the request.
func (s *Studio) ShowSettings() {
	model := widget.NewEntry()
	model.SetPlaceHolder("empty: the embedded tiny model")
	model.SetText(s.model)
	out := widget.NewEntry()
	out.SetText(s.cfg.OutputDir)
	browse := func(e *widget.Entry, title string) *widget.Button {
		return widget.NewButton("Choose…", func() { s.pickFolder(title, func(d string) { e.SetText(d) }) })
	}
	form := widget.NewForm(
		widget.NewFormItem("Model snapshot", container.NewBorder(nil, nil, nil, browse(model, "Choose the MiniMax-H3 snapshot folder"), model)),
		widget.NewFormItem("Save clips in", container.NewBorder(nil, nil, nil, browse(out, "Choose where clips are saved"), out)),
	)
	d := dialog.NewCustomConfirm("Settings", "Save", "Cancel", form, func(ok bool) {
		if !ok {
			return
		}
		if st, err := os.Stat(out.Text); err != nil || !st.IsDir() {
			dialog.ShowError(errors.New("the folder for clips does not exist; choose an existing folder"), s.win)
			return
		}
		s.model = model.Text
		s.cfg.OutputDir = out.Text
		p := s.app.Preferences()
		p.SetString(prefModel, s.model)
		p.SetString(prefOutput, s.cfg.OutputDir)
		s.edited()
	}, s.win)
	d.Resize(fyne.NewSize(640, 220))
	d.Show()
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
