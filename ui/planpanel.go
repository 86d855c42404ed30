package ui

import (
	"fmt"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
	"h3studio/engine/plan"
)

// planPanel shows what the planner says about the request being edited:
// sequence sizes, peak memory against this Mac's budget, each automatic
// decision in words, the estimated time and the verdict.
type planPanel struct {
	verdict *widget.Label
	summary *widget.Label
	tokens  *widget.Label
	rows    *widget.Label
	memory  *widget.ProgressBar
	memText string
	// memHead says when the memory peaks; on its own line, as the bar's
	// text does not wrap and would widen the panel.
	memHead   *widget.Label
	refs      *widget.Label
	decisions *widget.Label
	time      *widget.Label
	body      *fyne.Container // everything but the verdict
	// overridden says the budget is the one set in the settings, not
	// this Mac's own.
	overridden bool
}

func newPlanPanel() *planPanel {
	p := &planPanel{
		verdict:   widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		summary:   widget.NewLabel(""),
		tokens:    widget.NewLabel(""),
		rows:      widget.NewLabel(""),
		memory:    widget.NewProgressBar(),
		memHead:   widget.NewLabel(""),
		refs:      widget.NewLabel(""),
		decisions: widget.NewLabel(""),
		time:      widget.NewLabel(""),
	}
	for _, l := range []*widget.Label{p.verdict, p.summary, p.tokens, p.rows, p.memHead, p.refs, p.decisions, p.time} {
		l.Wrapping = fyne.TextWrapWord
	}
	p.memory.TextFormatter = func() string { return p.memText }
	p.body = container.NewVBox(p.summary, p.tokens, p.rows,
		p.memHead, p.memory, p.refs, p.decisions, p.time)
	p.clear("Planning…")
	return p
}

func (p *planPanel) view() fyne.CanvasObject {
	title := widget.NewLabelWithStyle("Plan", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	return container.NewVBox(title, p.verdict, p.body)
}

// clear empties the panel and shows msg as the verdict.
func (p *planPanel) clear(msg string) {
	p.verdict.SetText(msg)
	for _, l := range []*widget.Label{p.summary, p.tokens, p.rows, p.refs, p.decisions, p.time} {
		l.SetText("")
	}
	p.memText = ""
	p.memHead.SetText("")
	p.memory.SetValue(0)
	p.body.Hide()
}

// show fills the panel from a plan.
func (p *planPanel) show(pl *plan.Plan, labels []string) {
	p.body.Show()
	p.verdict.SetText(app.VerdictText(pl))
	render := ""
	if pl.RenderCanvas != pl.Canvas && pl.RenderCanvas.Width > 0 {
		render = fmt.Sprintf(", rendered at %s", pl.RenderCanvas)
	}
	p.summary.SetText(fmt.Sprintf("%s · %s%s · %d frames = %.2f s", pl.Task, pl.Canvas, render, pl.Frames, pl.Seconds))
	p.tokens.SetText(app.TokensText(pl.TextTokens))
	p.rows.SetText(app.RowsText(pl.DiTRows))
	m := pl.Memory
	if m.BudgetBytes > 0 {
		p.memory.SetValue(min(float64(m.PeakBytes)/float64(m.BudgetBytes), 1))
	}
	budget := app.GBText(m.BudgetBytes)
	if p.overridden {
		budget += " set in Settings"
	}
	p.memText = fmt.Sprintf("peak %s of %s", app.GBText(m.PeakBytes), budget)
	p.memHead.SetText(app.MemoryPeakText(m.PeakPhase))
	p.memory.Refresh()
	var refs []string
	for i, rp := range pl.References {
		name := rp.Kind
		if i < len(labels) {
			name = labels[i]
		}
		refs = append(refs, app.RefPlanText(name, rp))
	}
	for _, l := range pl.LoRAs {
		refs = append(refs, app.LoRAPlanText(filepath.Base(l.Path), l))
	}
	p.refs.SetText(strings.Join(refs, "\n"))
	var dec []string
	for _, dc := range pl.Decisions {
		dec = append(dec, "• "+dc.Reason)
	}
	for _, w := range pl.Warnings {
		dec = append(dec, "⚠ "+w)
	}
	p.decisions.SetText(strings.Join(dec, "\n"))
	showIf(p.refs, len(refs) > 0)
	showIf(p.decisions, len(dec) > 0)
	t := pl.Time
	p.time.SetText("Estimated time " + app.EstimateText(t))
}

// showIf hides a label with nothing to say, so it leaves no gap.
func showIf(l *widget.Label, on bool) {
	if on {
		l.Show()
	} else {
		l.Hide()
	}
}
