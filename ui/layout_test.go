package ui

import (
	"fmt"
	"h3studio/app"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// rect is an object's box on the canvas, clipped to the scrolls around it.
type rect struct {
	what     string
	min, max fyne.Position
}

func (r rect) empty() bool { return r.max.X-r.min.X < 1 || r.max.Y-r.min.Y < 1 }

func (r rect) intersect(o rect) rect {
	r.min = fyne.NewPos(max(r.min.X, o.min.X), max(r.min.Y, o.min.Y))
	r.max = fyne.NewPos(min(r.max.X, o.max.X), min(r.max.Y, o.max.Y))
	return r
}

// isLeaf says whether o is a control or picture the user sees as one
// thing: the overlap check compares these and does not look inside.
func isLeaf(o fyne.CanvasObject) bool {
	switch o.(type) {
	case *widget.Button, *tipButton, *widget.Entry, *promptEntry, *widget.Select, *widget.Label, *widget.Check,
		*widget.ProgressBar, *widget.Slider, *widget.RadioGroup, *canvas.Image:
		return true
	}
	return false
}

// leaves lists the visible leaves under o with their clipped boxes.
func leaves(o fyne.CanvasObject, at fyne.Position, clip rect, out *[]rect) {
	if !o.Visible() {
		return
	}
	box := rect{what: fmt.Sprintf("%T", o), min: at, max: at.Add(fyne.NewPos(o.Size().Width, o.Size().Height))}
	if isLeaf(o) {
		if b := box.intersect(clip); !b.empty() {
			if l, ok := o.(*widget.Label); ok {
				b.what += fmt.Sprintf(" %q", app.JobTitle(l.Text, 20))
			}
			*out = append(*out, b)
		}
		return
	}
	if _, ok := o.(*container.Scroll); ok {
		clip = clip.intersect(box)
	}
	kids := children(o)
	for _, k := range kids {
		leaves(k, at.Add(k.Position()), clip, out)
	}
}

// overlaps names every pair of visible leaves whose boxes overlap by more
// than a pixel each way.
func overlaps(c fyne.Canvas) []string {
	var ls []rect
	all := rect{max: fyne.NewPos(c.Size().Width, c.Size().Height)}
	leaves(c.Content(), fyne.Position{}, all, &ls)
	var out []string
	for i := range ls {
		for j := i + 1; j < len(ls); j++ {
			if o := ls[i].intersect(ls[j]); o.max.X-o.min.X > 1 && o.max.Y-o.min.Y > 1 {
				out = append(out, fmt.Sprintf("%s %v-%v overlaps %s %v-%v", ls[i].what, ls[i].min, ls[i].max, ls[j].what, ls[j].min, ls[j].max))
			}
		}
	}
	return out
}

// contains reports whether target is o or under it.
func contains(o, target fyne.CanvasObject) bool {
	if o == target {
		return true
	}
	kids := children(o)
	for _, k := range kids {
		if contains(k, target) {
			return true
		}
	}
	return false
}

// findSplit finds a vertical split with top above and bottom below it.
func findSplit(o, top, bottom fyne.CanvasObject) *container.Split {
	if sp, ok := o.(*container.Split); ok && !sp.Horizontal && contains(sp.Leading, top) && contains(sp.Trailing, bottom) {
		return sp
	}
	kids := children(o)
	for _, k := range kids {
		if sp := findSplit(k, top, bottom); sp != nil {
			return sp
		}
	}
	return nil
}

// shownButton is a button on show: the object in the tree (a tipButton
// or a plain Button) and its Button.
type shownButton struct {
	obj fyne.CanvasObject
	*widget.Button
}

// visibleButtons lists the buttons shown under o, looking inside widgets
// (splits, tabs, scrolls) and skipping hidden parts.
func visibleButtons(o fyne.CanvasObject) []shownButton {
	if !o.Visible() {
		return nil
	}
	switch v := o.(type) {
	case *widget.Button:
		return []shownButton{{v, v}}
	case *tipButton:
		return []shownButton{{v, &v.Button}}
	}
	kids := children(o)
	var out []shownButton
	for _, k := range kids {
		out = append(out, visibleButtons(k)...)
	}
	return out
}

// absPos is target's position on the canvas under root, found by walking
// the tree (the test driver knows an object's canvas only once painted).
func absPos(o, target fyne.CanvasObject, at fyne.Position) (fyne.Position, bool) {
	if o == target {
		return at, true
	}
	kids := children(o)
	for _, k := range kids {
		if p, ok := absPos(k, target, at.Add(k.Position())); ok {
			return p, true
		}
	}
	return fyne.Position{}, false
}
