package app

import (
	"fmt"
	"path/filepath"
	"strings"

	"h3studio/engine"
	"h3studio/engine/plan"
	"h3studio/engine/weights"
	"h3studio/models/demo"
)

// Model names a request may give besides a snapshot folder or a planner
// profile. An empty Request.Model is the Renderer's DefaultModel.
const (
	// DemoModel is the built-in demo model (models/demo), the default.
	DemoModel = "demo"
	// TinyModel is the generated random-weight tiny model: the tests'
	// model, whose cost does not change when the demo model is retrained.
	TinyModel = "tiny"
)

// Defaults are what a request that leaves a field zero gets, and the
// presets it may name: the model's declaration (its h3studio.json) where
// it has one, else the release's values.
type Defaults struct {
	// Declared is set when the model declares them (h3studio.json).
	Declared bool
	// Name is the model as people read it ("" when undeclared).
	Name                         string
	Width, Height, Frames, Steps int
	// VideoShift and AudioShift are the declared sigma shifts (0: the
	// partition's model_index.json).
	VideoShift, AudioShift float64
	// Presets are the quality presets the model offers, slowest first.
	Presets []Preset
}

// ReleaseDefaults are the defaults of a model that declares none
// (h3.c's canvas and length, the planner's step count, every preset).
var ReleaseDefaults = Defaults{Width: DefaultWidth, Height: DefaultHeight, Frames: DefaultFrames, Steps: plan.DefaultSteps, Presets: Presets}

// declaredDefaults are a snapshot's defaults: its declaration's values
// over the release's. A declared preset sets the step count only.
func declaredDefaults(d *weights.Declared) Defaults {
	out := ReleaseDefaults
	if d == nil {
		return out
	}
	out.Declared, out.Name = true, d.Name
	if d.Canvas.Width > 0 {
		out.Width, out.Height = d.Canvas.Width, d.Canvas.Height
	}
	if d.Frames > 0 {
		out.Frames = d.Frames
	}
	if d.Steps > 0 {
		out.Steps = d.Steps
	}
	if d.Shifts != nil {
		out.VideoShift, out.AudioShift = d.Shifts.Video, d.Shifts.Audio
	}
	if len(d.Presets) > 0 {
		out.Presets = make([]Preset, len(d.Presets))
		for i, p := range d.Presets {
			// Requests and the window name presets in lower case.
			out.Presets[i] = Preset{Name: strings.ToLower(p.Name), Steps: p.Steps}
		}
	}
	return out
}

// Defaults are the defaults of a request's model ("" the Renderer's
// default): its declaration's, or the release's for a model that has none
// and for a planner profile. The model is opened (discovery only).
func (rd *Renderer) Defaults(model string) (Defaults, error) {
	eng, _, err := rd.model(model)
	if err != nil {
		return Defaults{}, err
	}
	return engineDefaults(eng), nil
}

// engineDefaults are an open model's defaults (nil: a planner profile).
func engineDefaults(eng *engine.Engine) Defaults {
	if eng == nil {
		return ReleaseDefaults
	}
	return declaredDefaults(eng.Snapshot().Declared)
}

// resolveModel is the model a request names, the Renderer's default for "".
func (rd *Renderer) resolveModel(model string) string {
	if model == "" {
		model = rd.DefaultModel
	}
	if model == "" {
		return DemoModel
	}
	return model
}

// builtInDir is the snapshot folder of a built-in model under the cache
// (written on first use), or ok false when model is not one.
func builtInDir(model, cacheDir string) (dir string, ok bool, err error) {
	if model != DemoModel && model != TinyModel {
		return "", false, nil
	}
	if cacheDir == "" {
		return "", true, fmt.Errorf("app: no cache folder for the %s", BuiltInModelName(model))
	}
	root := filepath.Join(cacheDir, "models")
	if model == TinyModel {
		dir, err = engine.TinyModelDir(root)
	} else {
		dir, err = demo.Dir(root)
	}
	return dir, true, err
}
