package weights

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"h3studio/engine/layout"
)

// DeclarationFile is H3 Studio's own file at a snapshot's root (not part
// of the official layout): what a model was trained for, so a small model
// is run at its own canvas, length and steps rather than the release's.
// The release has none, and a snapshot without it behaves as the release.
const DeclarationFile = "h3studio.json"

// Declared is a snapshot's h3studio.json. Zero fields declare nothing
// (the release's value applies).
type Declared struct {
	// Name is the model as people read it.
	Name   string         `json:"name"`
	Canvas DeclaredCanvas `json:"canvas"`
	// Frames is the length trained for, at FPS (which must be the
	// model's 24 when given).
	Frames int `json:"frames"`
	FPS    int `json:"fps"`
	Steps  int `json:"steps"`
	// Shifts are the sigma schedule's shifts trained for (nil: the
	// partition's model_index.json, as for the release).
	Shifts *DeclaredShifts `json:"shifts,omitempty"`
	// Presets replace the release's quality presets, slowest first.
	Presets []DeclaredPreset `json:"presets"`
	// ReferenceShortEdge caps reference pictures' and clips' short edge
	// (0: the release's sizing, which is made for a 768-class model).
	ReferenceShortEdge int `json:"reference_short_edge"`
}

// DeclaredCanvas is the output canvas trained for.
type DeclaredCanvas struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// DeclaredShifts are the video and audio schedules' sigma shifts.
type DeclaredShifts struct {
	Video float64 `json:"video"`
	Audio float64 `json:"audio"`
}

// DeclaredPreset is one quality preset: a name and its step count.
type DeclaredPreset struct {
	Name  string `json:"name"`
	Steps int    `json:"steps"`
}

// readDeclared reads root's h3studio.json; nil when there is none.
func readDeclared(root string) (*Declared, error) {
	path := filepath.Join(root, DeclarationFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	refuse := func(what string) error {
		return &SnapshotError{path, what + "; fix it, or remove the file to run the model with the release's defaults"}
	}
	if err != nil {
		return nil, refuse("cannot be read (" + err.Error() + ")")
	}
	// Other keys are allowed: the training tools keep their record in the
	// same file (tools/train, "training").
	var d Declared
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, refuse("is not valid JSON for H3 Studio's model declaration: " + err.Error())
	}
	if problem := d.problem(); problem != "" {
		return nil, refuse(problem)
	}
	return &d, nil
}

// maxDeclaredSteps bounds a declared step count as the request's own
// check does.
const maxDeclaredSteps = 1000

// problem is the first rule the declaration breaks ("" none).
func (d *Declared) problem() string {
	c := d.Canvas
	switch {
	case c != (DeclaredCanvas{}) && (c.Width <= 0 || c.Height <= 0 || c.Width%layout.CanvasMultiple != 0 || c.Height%layout.CanvasMultiple != 0):
		return fmt.Sprintf("declares canvas %dx%d, whose width and height must be positive multiples of %d", c.Width, c.Height, layout.CanvasMultiple)
	case d.FPS != 0 && d.FPS != layout.FPS:
		return fmt.Sprintf("declares fps %d, but the model makes %d frames a second", d.FPS, layout.FPS)
	case d.Frames < 0:
		return fmt.Sprintf("declares frames %d, which must be positive", d.Frames)
	case d.Steps < 0 || d.Steps > maxDeclaredSteps:
		return fmt.Sprintf("declares steps %d, outside 1..%d", d.Steps, maxDeclaredSteps)
	case d.ReferenceShortEdge < 0 || d.ReferenceShortEdge%layout.CanvasMultiple != 0:
		return fmt.Sprintf("declares reference_short_edge %d, which must be a positive multiple of %d", d.ReferenceShortEdge, layout.CanvasMultiple)
	case d.Shifts != nil && (d.Shifts.Video <= 0 || d.Shifts.Audio <= 0):
		return fmt.Sprintf("declares shifts %g and %g, which must both be above 0", d.Shifts.Video, d.Shifts.Audio)
	}
	for i, p := range d.Presets {
		switch {
		case p.Name == "":
			return fmt.Sprintf("gives preset %d no name", i+1)
		case p.Steps < 1 || p.Steps > maxDeclaredSteps:
			return fmt.Sprintf("declares preset %q with %d steps, outside 1..%d", p.Name, p.Steps, maxDeclaredSteps)
		}
	}
	return ""
}
