package ui

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
	"h3studio/app/download"
)

// Choices of the partition select, mapped to app.DownloadRequest's.
var getModelPartitions = []struct{ label, value string }{
	{"Both partitions", ""},
	{"FL2VA only: text and first/last frames", "fl2va"},
	{"Ref2VA only: references", "ref2va"},
}

// getModel is the "Get MiniMax-H3…" dialog: it runs the same download as
// `h3studio download` with its progress in the dialog, and on success
// selects the folder as the model snapshot (in the open Settings and in
// the preferences).
type getModel struct {
	s        *Studio
	dlg      dialog.Dialog
	repo     *widget.Entry
	part     *widget.Select
	dir      *widget.Entry
	start    *widget.Button
	stop     *widget.Button
	bar      *widget.ProgressBar
	status   *widget.Label
	cancel   context.CancelFunc
	selected func(dir string) // fills the Settings field
}

// ShowGetModel opens the download dialog; selected (may be nil) receives
// the folder once it is downloaded and validated.
func (s *Studio) ShowGetModel(selected func(dir string)) {
	g := &getModel{s: s, selected: selected}
	g.repo = widget.NewEntry()
	g.repo.SetText(app.DefaultRepo)
	var labels []string
	for _, p := range getModelPartitions {
		labels = append(labels, p.label)
	}
	g.part = widget.NewSelect(labels, nil)
	g.part.SetSelectedIndex(0)
	g.dir = widget.NewEntry()
	g.dir.SetPlaceHolder("an empty folder, or one a download stopped in")
	browse := widget.NewButton("Choose…", func() {
		s.pickFolder("Choose where MiniMax-H3 is downloaded", func(d string) { g.dir.SetText(d) })
	})
	g.start = widget.NewButton("Download", g.run)
	g.start.Importance = widget.HighImportance
	g.stop = widget.NewButton("Stop", func() { g.cancel() })
	g.stop.Disable()
	g.bar = widget.NewProgressBar()
	g.status = widget.NewLabel("About 134 GB per partition. A stopped download resumes where it stopped.")
	g.status.Wrapping = fyne.TextWrapWord
	form := widget.NewForm(
		widget.NewFormItem("Repository", g.repo),
		widget.NewFormItem("Partitions", g.part),
		widget.NewFormItem("Into folder", container.NewBorder(nil, nil, nil, browse, g.dir)),
	)
	content := container.NewVBox(form, container.NewHBox(g.start, g.stop), g.bar, g.status)
	g.dlg = dialog.NewCustom("Get MiniMax-H3", "Close", content, s.win)
	g.dlg.SetOnClosed(func() {
		if g.cancel != nil {
			g.cancel()
		}
	})
	g.dlg.Resize(fyne.NewSize(600, 300))
	s.getModel = g
	g.dlg.Show()
}

// run starts the download on a background goroutine.
func (g *getModel) run() {
	req := app.DownloadRequest{Repo: strings.TrimSpace(g.repo.Text), Dir: strings.TrimSpace(g.dir.Text)}
	if req.Dir == "" {
		g.status.SetText("Choose the folder to download into first.")
		return
	}
	req.Partition = getModelPartitions[max(g.part.SelectedIndex(), 0)].value
	ctx, cancel := context.WithCancel(g.s.ctx)
	g.cancel = cancel
	g.start.Disable()
	g.stop.Enable()
	g.status.SetText("Asking the hub for the file list…")
	co := g.s.co
	g.s.spawn(func() {
		defer cancel()
		_, res, err := app.Download(ctx, req, app.DownloadEvents{
			Planned: func(p *download.Plan) {
				text := fmt.Sprintf("%d files, %s; %s to fetch, %s.", len(p.Files), download.Bytes(p.Size()), download.Bytes(p.Need), app.FreeText(p.Free))
				co.post(func() { g.status.SetText(text) })
			},
			Progress: func(p download.Progress) {
				text, frac := app.DownloadStatus(p), 1.0
				if p.Total > 0 {
					frac = float64(p.Done) / float64(p.Total)
				}
				co.replace("download", func() {
					g.bar.SetValue(frac)
					g.status.SetText(text)
				})
			},
		})
		co.post(func() { g.finish(req.Dir, res, err) })
	})
}

// finish runs on the UI goroutine when the download ends.
func (g *getModel) finish(dir string, res download.Result, err error) {
	g.start.Enable()
	g.stop.Disable()
	if err != nil {
		g.status.SetText(err.Error())
		return
	}
	g.bar.SetValue(1)
	g.status.SetText(fmt.Sprintf("Done: %d files fetched, %d already there. The folder is now the model snapshot.", res.Fetched, res.Kept+res.Skipped))
	g.s.selectModel(dir)
	if g.selected != nil {
		g.selected(dir)
	}
}

// selectModel makes dir the model snapshot, as Settings' Save does.
func (s *Studio) selectModel(dir string) {
	s.model = dir
	s.app.Preferences().SetString(prefModel, dir)
	s.edited()
}
