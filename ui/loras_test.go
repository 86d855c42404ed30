package ui

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
	"h3studio/engine/lora"
	"h3studio/engine/lora/loratest"
)

// tinyLoRA writes a rank-2 bare PEFT adapter over the tiny DiT named
// name (loratest.Tiny); widen > 0 makes it a misfit.
func tinyLoRA(t *testing.T, name string, widen int) string { return loratest.Tiny(t, name, widen) }

// turboName is larryvrh's Turbo v4-600 file name: app's Turbo table knows
// it (6 steps, shifts 12/3), so an adapter under it offers the preset.
const turboName = "minimax_h3_turbo_v4_step600_ema.safetensors"

func tinyTargets() lora.Target { return loratest.TinyTarget() }

// loraRow is the widgets of row i of the LoRA list.
type loraRow struct {
	labels []*widget.Label
	slider *widget.Slider
	field  *widget.Entry
	remove *tipButton
}

// findLoRARow finds row i's widgets; it runs on the UI goroutine.
func findLoRARow(s *Studio, i int) (loraRow, bool) {
	objs := s.ed.loras.box.Objects
	var r loraRow
	if len(objs) < i+2 {
		return r, false
	}
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		case *widget.Label:
			r.labels = append(r.labels, v)
		case *widget.Slider:
			r.slider = v
		case *widget.Entry:
			r.field = v
		case *tipButton:
			r.remove = v
		}
	}
	walk(objs[i+1]) // after the header
	return r, len(r.labels) == 2 && r.slider != nil && r.field != nil && r.remove != nil
}

// row is row i of the LoRA list, or the test stops.
func (h *harness) row(i int) loraRow {
	h.t.Helper()
	var r loraRow
	var ok bool
	h.run(func() { r, ok = findLoRARow(h.s, i) })
	if !ok {
		h.t.Fatalf("the LoRA list has no row %d of name, coverage, slider, field and remove", i)
	}
	return r
}

// shownLoRAs is the LoRAs of the plan on show, as the planner got them.
func (h *harness) shownLoRAs() string {
	var out []string
	if h.s.shown == nil {
		return "no plan"
	}
	for _, l := range h.s.shown.Request.LoRAs {
		out = append(out, fmt.Sprintf("%s:%g", filepath.Base(l.Path), l.Strength))
	}
	return strings.Join(out, ",")
}

// A dropped adapter is listed with its name and coverage, its slider
// changes the request's strength and re-plans, Remove takes it out, and
// Undo walks back through each of those steps.
func TestLoRAListAddSlideRemove(t *testing.T) {
	h := newHarness(t)
	path := tinyLoRA(t, "style.safetensors", 0)
	h.waitSettled()
	h.drop(path)
	h.waitFor("the LoRA to be listed", 60*time.Second, func() bool { return len(h.s.ed.loras.items) == 1 && h.settled() })
	wantCov := fmt.Sprintf("%d modules · rank 2", len(tinyTargets().Modules))
	row := h.row(0)
	h.run(func() {
		if row.labels[0].Text != "style.safetensors" || row.labels[1].Text != wantCov {
			t.Errorf("the row says %q / %q, want style.safetensors / %q", row.labels[0].Text, row.labels[1].Text, wantCov)
		}
		if len(h.s.images.items)+len(h.s.videos.items)+len(h.s.audio.items) != 0 {
			t.Error("the adapter was taken for a reference")
		}
		if got := h.shownLoRAs(); got != "style.safetensors:1" {
			t.Errorf("the plan was made with LoRAs %q, want style.safetensors:1", got)
		}
	})
	var before int
	h.run(func() {
		before = h.s.edits
		row.slider.SetValue(0.35) // as a drag moves it
	})
	h.waitSettled()
	h.run(func() {
		r, err := h.s.Request()
		if err != nil || len(r.LoRAs) != 1 || r.LoRAs[0].Strength != 0.35 {
			t.Errorf("after the slider the request has %+v (%v), want strength 0.35", r.LoRAs, err)
		}
		if h.s.edits == before || h.shownLoRAs() != "style.safetensors:0.35" {
			t.Errorf("the slider did not re-plan: %q", h.shownLoRAs())
		}
		if f := row.field.Text; f != "0.35" {
			t.Errorf("the strength field says %q", f)
		}
		test.Tap(row.remove)
	})
	h.waitSettled()
	h.run(func() {
		if r, _ := h.s.Request(); len(r.LoRAs) != 0 || h.shownLoRAs() != "" {
			t.Errorf("after Remove the request has %+v and the plan %q", r.LoRAs, h.shownLoRAs())
		}
		h.s.Undo()
		if it := h.s.ed.loras.items; len(it) != 1 || it[0].Strength != 0.35 {
			t.Errorf("Undo of Remove gives %+v", it)
		}
		h.s.Undo()
		if it := h.s.ed.loras.items; len(it) != 1 || it[0].Strength != 1 {
			t.Errorf("Undo of the slider gives %+v", it)
		}
	})
	if v := h.row(0).slider.Value; v != 1 {
		t.Errorf("after Undo the slider is at %g", v)
	}
	h.run(func() {
		h.s.Undo()
		if it := h.s.ed.loras.items; len(it) != 0 {
			t.Errorf("Undo of the drop gives %+v", it)
		}
	})
}

// The strength field takes the CLI's range, beyond the slider's ends; a
// strength out of it is a field error naming the adapter.
func TestLoRAStrengthField(t *testing.T) {
	h := newHarness(t)
	path := tinyLoRA(t, "style.safetensors", 0)
	h.run(func() { h.s.AddLoRAs([]string{path}) })
	h.waitFor("the LoRA to be listed", 60*time.Second, func() bool { return len(h.s.ed.loras.items) == 1 })
	row := h.row(0)
	h.run(func() {
		row.field.SetText("3.5")
		if r, err := h.s.Request(); err != nil || r.LoRAs[0].Strength != 3.5 || row.slider.Value != sliderStrength {
			t.Errorf("strength 3.5 gives %+v (%v), slider at %g", r.LoRAs, err, row.slider.Value)
		}
		row.field.SetText(fmt.Sprint(app.MaxLoRAStrength + 1))
		if _, err := h.s.Request(); err == nil || err.Error() != app.BadLoRAStrengthText("style.safetensors") {
			t.Errorf("a strength beyond the CLI's limit gives %v", err)
		}
	})
}

// An adapter that does not fit the model is not listed; the notice says
// the sentence the CLI prints for it.
func TestLoRAMisfitNotAdded(t *testing.T) {
	h := newHarness(t)
	bad := tinyLoRA(t, "wide.safetensors", 3)
	h.waitSettled()
	h.run(func() { h.s.AddLoRAs([]string{bad}) })
	h.waitFor("the file to be read", 60*time.Second, func() bool { return h.s.loading == 0 })
	_, want := h.rd.InspectLoRA("", bad)
	h.run(func() {
		if len(h.s.ed.loras.items) != 0 {
			t.Errorf("a misfit was listed: %+v", h.s.ed.loras.items)
		}
		if want == nil || h.s.notice.Text != app.Advice(want) || !strings.Contains(h.s.notice.Text, "wide.safetensors does not fit this model") {
			t.Errorf("the notice says %q, want the CLI's sentence for %v", h.s.notice.Text, want)
		}
	})
}

// A Turbo adapter offers the Turbo preset; choosing it plans its 6 steps
// and shifts 12/3, which the Advanced fields show and an edit overrides;
// removing the adapter takes the preset away.
func TestLoRATurboPreset(t *testing.T) {
	h := newHarness(t)
	path := tinyLoRA(t, turboName, 0)
	h.waitSettled()
	h.run(func() {
		if slices.Contains(h.s.ed.preset.Options, "Turbo") {
			t.Error("Turbo is offered without a Turbo LoRA")
		}
		h.s.AddLoRAs([]string{path})
	})
	h.waitFor("the LoRA to be listed", 60*time.Second, func() bool { return len(h.s.ed.loras.items) == 1 && h.settled() })
	var offered []string
	h.run(func() { offered = h.s.ed.preset.Options })
	if !slices.Contains(offered, "Turbo") {
		t.Fatalf("Turbo is not offered with %s: %v", filepath.Base(path), offered)
	}
	h.run(func() { h.s.ed.preset.SetSelected("Turbo") })
	shown := func() (int, float64, float64) {
		pr := h.s.shown.Request
		return pr.Steps, pr.VideoShift, pr.AudioShift
	}
	h.waitSettled()
	h.run(func() {
		if st, v, a := shown(); st != 6 || v != 12 || a != 3 {
			t.Errorf("the Turbo preset plans %d steps at shifts %g/%g, want 6 at 12/3", st, v, a)
		}
		if p := h.s.ed.steps.PlaceHolder + " " + h.s.ed.videoShift.PlaceHolder + " " + h.s.ed.audioShift.PlaceHolder; p != "6 (Turbo) 12 (Turbo) 3 (Turbo)" {
			t.Errorf("the Advanced fields show %q", p)
		}
		h.s.ed.steps.SetText("8")
		h.s.ed.videoShift.SetText("5")
	})
	h.waitSettled()
	row := h.row(0)
	h.run(func() {
		if st, v, a := shown(); st != 8 || v != 5 || a != 3 {
			t.Errorf("edited, the Turbo preset plans %d steps at shifts %g/%g, want 8 at 5/3", st, v, a)
		}
		test.Tap(row.remove)
		if h.s.ed.preset.Selected != "Default" || slices.Contains(h.s.ed.preset.Options, "Turbo") {
			t.Errorf("without the LoRA the preset is %q of %v", h.s.ed.preset.Selected, h.s.ed.preset.Options)
		}
	})
}

// Restoring a request with LoRAs (Reuse, a dropped clip) lists them with
// their strengths and checks them for their coverage lines; a Turbo
// preset comes back with its adapter.
func TestRestoreFillsLoRAs(t *testing.T) {
	h := newHarness(t)
	path := tinyLoRA(t, turboName, 0)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h.waitSettled()
	req := app.Request{Prompt: "a cat", Width: 64, Height: 64, Seconds: 1, Seed: 3, Preset: app.TurboPreset,
		LoRAs: []app.LoRA{{Path: path, Strength: 0.7, SHA256: fmt.Sprintf("%x", sha256.Sum256(raw))}}}
	h.run(func() { h.s.Restore(req) })
	wantCov := fmt.Sprintf("%d modules · rank 2", len(tinyTargets().Modules))
	h.waitFor("the coverage line", 60*time.Second, func() bool {
		r, ok := findLoRARow(h.s, 0)
		return ok && len(h.s.ed.loras.items) == 1 && r.labels[1].Text == wantCov
	})
	h.waitSettled()
	h.run(func() {
		r, err := h.s.Request()
		if err != nil || len(r.LoRAs) != 1 || r.LoRAs[0].Path != path || r.LoRAs[0].Strength != 0.7 {
			t.Errorf("the restored request has %+v (%v)", r.LoRAs, err)
		}
		if h.s.ed.preset.Selected != "Turbo" || h.shownLoRAs() != filepath.Base(path)+":0.7" {
			t.Errorf("restored preset %q, plan LoRAs %q", h.s.ed.preset.Selected, h.shownLoRAs())
		}
	})
}

// renderStats is what these tests read of the engine's stats of a job, as
// the history records them.
type renderStats struct {
	Forwards int      `json:"forwards"`
	Cached   []string `json:"cached"`
}

// rendered waits for job i of the queue and returns the engine's stats of
// it and the request the history recorded for it.
func (h *harness) rendered(i int) (st renderStats, _ app.Request) {
	h.t.Helper()
	var id, reason string
	h.run(func() {
		if jobs := h.s.queue.Jobs(); len(jobs) > i {
			id = jobs[i].ID
		}
		reason = h.s.reason.Text
	})
	if id == "" {
		h.t.Fatalf("no job %d was queued: %q", i, reason)
	}
	h.waitFor("job "+id+" to finish", 120*time.Second, func() bool { return h.status(id) == app.StatusDone })
	e, err := h.s.cfg.History.Get(id)
	if err != nil {
		h.t.Fatal(err)
	}
	if err := json.Unmarshal(e.Stats, &st); err != nil {
		h.t.Fatalf("job %s's stats: %v", id, err)
	}
	r, err := e.DecodeRequest()
	if err != nil {
		h.t.Fatal(err)
	}
	return st, r
}

// Render takes the listed LoRA and the Turbo preset to the engine and
// records the adapter (file, digest, strength) with the job. A strength
// changed on the slider afterwards is planned and rendered on the same
// open engine: the render takes the prompt's conditioning from the
// engine's cache, which a reopened engine would not have.
func TestLoRARenderFromWindow(t *testing.T) {
	h := newHarness(t)
	h.small("Default")
	path := tinyLoRA(t, turboName, 0)
	h.run(func() { h.s.AddLoRAs([]string{path}) })
	h.waitFor("the LoRA to be listed", 60*time.Second, func() bool { return len(h.s.ed.loras.items) == 1 && h.settled() })
	h.run(func() { h.s.ed.preset.SetSelected("Turbo") })
	h.waitSettled()
	h.run(func() { test.Tap(h.s.renderBtn) })
	st, req := h.rendered(0)
	if st.Forwards != 6 || len(req.LoRAs) != 1 || req.LoRAs[0].Path != path || req.LoRAs[0].Strength != 1 || len(req.LoRAs[0].SHA256) != 64 {
		t.Errorf("the render ran %d forwards and records LoRAs %+v, want 6 with the Turbo LoRA at 1 and its digest", st.Forwards, req.LoRAs)
	}
	row := h.row(0)
	h.run(func() { row.slider.SetValue(0.5) })
	h.waitSettled()
	h.run(func() {
		if h.shownLoRAs() != filepath.Base(path)+":0.5" {
			t.Errorf("re-planned with LoRAs %q, want strength 0.5", h.shownLoRAs())
		}
		test.Tap(h.s.renderBtn)
	})
	if st, req := h.rendered(1); len(req.LoRAs) != 1 || req.LoRAs[0].Strength != 0.5 || !slices.Contains(st.Cached, "text") {
		t.Errorf("the second render records LoRAs %+v and took %v from the engine's cache, want strength 0.5 and the text", req.LoRAs, st.Cached)
	}
}

// Undo of a Turbo LoRA's removal brings the LoRA back with the Turbo
// preset it ran under (the removal had fallen back to Default).
func TestUndoRemovalRestoresTurboPreset(t *testing.T) {
	h := newHarness(t)
	path := tinyLoRA(t, turboName, 0)
	h.waitSettled()
	h.run(func() { h.s.AddLoRAs([]string{path}) })
	h.waitFor("the LoRA to be listed", 60*time.Second, func() bool { return len(h.s.ed.loras.items) == 1 && h.settled() })
	h.run(func() { h.s.ed.preset.SetSelected("Turbo") })
	h.waitSettled()
	row := h.row(0)
	h.run(func() { test.Tap(row.remove) })
	h.waitSettled()
	h.run(func() {
		if h.s.ed.preset.Selected != "Default" {
			t.Fatalf("after the removal the preset is %q", h.s.ed.preset.Selected)
		}
		h.s.Undo()
		if len(h.s.ed.loras.items) != 1 || h.s.ed.preset.Selected != "Turbo" {
			t.Errorf("after Undo: %d LoRAs, preset %q; want the LoRA back under Turbo", len(h.s.ed.loras.items), h.s.ed.preset.Selected)
		}
	})
}

// A Turbo LoRA's strength taken through 0 and back (a slider drag) keeps
// the Turbo preset the user chose: at 0 the preset falls back to Default,
// and it returns with the LoRA.
func TestTurboPresetSurvivesStrengthZero(t *testing.T) {
	h := newHarness(t)
	path := tinyLoRA(t, turboName, 0)
	h.waitSettled()
	h.run(func() { h.s.AddLoRAs([]string{path}) })
	h.waitFor("the LoRA to be listed", 60*time.Second, func() bool { return len(h.s.ed.loras.items) == 1 && h.settled() })
	h.run(func() { h.s.ed.preset.SetSelected("Turbo") })
	h.waitSettled()
	row := h.row(0)
	h.run(func() {
		row.field.SetText("0")
		if h.s.ed.preset.Selected != "Default" {
			t.Errorf("at strength 0 the preset is %q, want Default", h.s.ed.preset.Selected)
		}
		row.field.SetText("1")
		if h.s.ed.preset.Selected != "Turbo" {
			t.Errorf("back at strength 1 the preset is %q, want Turbo", h.s.ed.preset.Selected)
		}
	})
}

// The plan panel names each listed LoRA with its strength and the memory
// its factors take, in the CLI's words.
func TestPlanPanelListsLoRAs(t *testing.T) {
	h := newHarness(t)
	path := tinyLoRA(t, "style.safetensors", 0)
	h.waitSettled()
	h.drop(path)
	h.waitFor("the LoRA to be listed", 60*time.Second, func() bool { return len(h.s.ed.loras.items) == 1 && h.settled() })
	h.run(func() {
		if got := h.s.plan.refs.Text; !strings.Contains(got, "style.safetensors at strength 1: ") || !strings.Contains(got, " beside the transformer") {
			t.Errorf("the plan panel's lines %q do not name the LoRA", got)
		}
	})
}

// A restored request whose LoRA file has changed since the clip was made
// (its recorded SHA-256 differs) says so on the LoRA's row.
func TestRestoredLoRAChangedFile(t *testing.T) {
	h := newHarness(t)
	path := tinyLoRA(t, "style.safetensors", 0)
	h.waitSettled()
	req := app.Request{Prompt: "a cat", Width: 64, Height: 64, Seconds: 1, Seed: 3,
		LoRAs: []app.LoRA{{Path: path, Strength: 1, SHA256: strings.Repeat("0", 64)}}}
	h.run(func() { h.s.Restore(req) })
	want := app.LoRAChangedText(fmt.Sprintf("%d modules · rank 2", len(tinyTargets().Modules)))
	h.waitFor("the coverage line", 60*time.Second, func() bool {
		r, ok := findLoRARow(h.s, 0)
		return ok && r.labels[1].Text == want
	})
}
