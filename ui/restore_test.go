package ui

import (
	"context"
	"errors"
	"image/color"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"h3studio/app"
	"h3studio/media"
)

// dialogButton finds a button of the dialog on top of the window.
func (h *harness) dialogButton(text string) *widget.Button {
	h.t.Helper()
	pop, ok := h.s.win.Canvas().Overlays().Top().(*widget.PopUp)
	if !ok {
		h.t.Fatalf("no dialog open")
	}
	return buttonWith(h.t, pop.Content, nil, text)
}

func hasDialog(c fyne.Canvas) bool { return c.Overlays().Top() != nil }

// Dropping a clip the studio rendered offers to restore its settings; on
// Restore the editor and the references are those of the clip's request.
// A clip without them is added as a reference video as before, and so is
// a rendered clip when the user picks "Add as reference".
func TestDropRenderedClipRestores(t *testing.T) {
	h := newHarness(t)
	still, _, _ := fixtures(t)
	// A small clip with a soundtrack, used without it (the kind a restore
	// must keep): the VAE encodes it in a second.
	clip := filepath.Join(t.TempDir(), "small.mp4")
	if err := media.EncodeMP4(t.Context(), clip, media.EncodeOptions{Width: 64, Height: 48, Audio: tone(1)}, numberedFrames(24, 64, 48)); err != nil {
		t.Fatal(err)
	}
	past := app.Request{Prompt: "a heron lands on a jetty", Width: 64, Height: 64, Frames: 22, Steps: 2, Seed: 1234, Preset: "fast",
		References: []app.Reference{{Kind: app.RefVideo, Path: clip}, {Kind: app.RefImage, Path: still}},
		Machine:    machine, Output: filepath.Join(t.TempDir(), "heron.mp4"),
		// The cheap named sizes (the official ones take minutes on a CPU).
		RefImageSize: "match", RefClipSize: "source"}
	// One thread: ggml's spinning workers cost more than they gain on a
	// 64x64 clip on shared cores.
	rd := &app.Renderer{CacheDir: cacheDir, DefaultModel: app.TinyModel, Threads: 1}
	defer rd.Close()
	if _, err := rd.Render(context.Background(), past, nil); err != nil {
		t.Fatal(err)
	}
	h.waitSettled()

	h.drop(clip)
	h.waitSettled()
	h.run(func() {
		if h.s.RestoreOffered() || hasDialog(h.s.win.Canvas()) || len(h.s.videos.items) != 1 || h.s.videos.items[0].Path != clip {
			t.Fatalf("plain clip: offered %v, videos %v", h.s.RestoreOffered(), paths(h.s.videos.items))
		}
	})

	h.drop(past.Output, still)
	h.waitFor("the offer to restore", 30*time.Second, func() bool { return h.s.RestoreOffered() })
	h.waitSettled()
	h.run(func() {
		// The still dropped with it is added at once.
		if len(h.s.images.items) != 1 || len(h.s.videos.items) != 1 {
			t.Errorf("while asking: pictures %v, videos %v", paths(h.s.images.items), paths(h.s.videos.items))
		}
		test.Tap(h.dialogButton("Restore"))
	})
	h.waitSettled()
	h.run(func() {
		got, err := h.s.Request()
		if err != nil {
			t.Fatal(err)
		}
		if got.Prompt != past.Prompt || got.Width != 64 || got.Height != 64 || got.Frames != 22 || got.Seed != 1234 || got.Preset != "fast" || got.Steps != 2 {
			t.Errorf("restored %+v", got)
		}
		if len(got.References) != 2 || got.References[0] != past.References[1] || got.References[1] != past.References[0] {
			// Pictures come first in the model's order (Picture 1, Video 1).
			t.Errorf("restored references %+v", got.References)
		}
		if h.s.RestoreOffered() || hasDialog(h.s.win.Canvas()) {
			t.Error("the dialog is still open")
		}
	})

	h.drop(past.Output)
	h.waitFor("the second offer", 30*time.Second, func() bool { return h.s.RestoreOffered() })
	h.run(func() { test.Tap(h.dialogButton("Add as reference")) })
	h.waitSettled()
	h.run(func() {
		if v := paths(h.s.videos.items); len(v) != 2 || v[1] != past.Output {
			t.Errorf("videos after Add as reference: %v", v)
		}
		if h.s.ed.seed.Text != "1234" {
			t.Errorf("declining changed the seed to %s", h.s.ed.seed.Text)
		}
	})
}

// A small memory budget in the settings reaches the planner: the plan
// panel shows the refusal the renderer gives under that budget, the budget
// is remembered, and clearing the field brings back this machine's.
func TestSettingsMemoryBudget(t *testing.T) {
	h := newHarness(t)
	h.small("Fast")
	h.run(func() {
		if h.s.renderBtn.Disabled() {
			t.Fatalf("render disabled before the override: %q", h.s.reason.Text)
		}
		h.s.ShowSettings()
		h.s.settings.mem.SetText("half a GB")
		test.Tap(h.dialogButton("Save"))
	})
	h.run(func() {
		// The dialog stays open with what was typed and why it is wrong
		// beside it (it used to close and lose the input).
		f := h.s.settings
		if h.s.memoryGB != 0 || !hasDialog(h.s.win.Canvas()) || f.mem.Text != "half a GB" || f.problem.Text != app.BadMemoryBudgetText {
			t.Errorf("budget %q: accepted as %g, dialog open %v, field %q, problem %q", "half a GB", h.s.memoryGB, hasDialog(h.s.win.Canvas()), f.mem.Text, f.problem.Text)
		}
		f.mem.SetText("0.05")
		test.Tap(h.dialogButton("Save"))
	})
	h.waitFor("the settings to close", 10*time.Second, func() bool { return !hasDialog(h.s.win.Canvas()) })
	h.waitSettled()
	var req app.Request
	h.run(func() {
		var err error
		if req, err = h.s.Request(); err != nil {
			t.Fatal(err)
		}
	})
	// The renderer the window drives, asked directly, refuses the same
	// request under the same budget.
	_, err := h.rd.Prepare(context.Background(), req)
	var refused *app.RefusedError
	if !errors.As(err, &refused) {
		t.Fatalf("Prepare under 0.05 GB: %v, want a refusal", err)
	}
	h.run(func() {
		// The window says what the CLI says for the same refusal.
		if want := app.Advice(refused); !h.s.renderBtn.Disabled() || h.s.reason.Text != want {
			t.Errorf("render disabled %v, reason %q; want %q", h.s.renderBtn.Disabled(), h.s.reason.Text, want)
		}
		if !strings.HasPrefix(h.s.plan.verdict.Text, "Does not fit") || !strings.Contains(h.s.plan.memText, "GB set in Settings") {
			t.Errorf("plan panel: %q, memory %q", h.s.plan.verdict.Text, h.s.plan.memText)
		}
		if gb := h.s.app.Preferences().Float(prefMemoryGB); gb != 0.05 {
			t.Errorf("remembered budget %g, want 0.05", gb)
		}
		t.Logf("under 0.05 GB: %s | %s", h.s.reason.Text, h.s.plan.memText)
		h.s.ShowSettings()
		if h.s.settings.mem.Text != "0.05" {
			t.Errorf("settings show the budget as %q", h.s.settings.mem.Text)
		}
		h.s.settings.mem.SetText("")
		test.Tap(h.dialogButton("Save"))
	})
	h.waitFor("the settings to close", 10*time.Second, func() bool { return !hasDialog(h.s.win.Canvas()) })
	h.waitSettled()
	h.run(func() {
		if h.s.renderBtn.Disabled() || strings.Contains(h.s.plan.memText, "Settings") {
			t.Errorf("after clearing the budget: disabled %v (%q), memory %q", h.s.renderBtn.Disabled(), h.s.reason.Text, h.s.plan.memText)
		}
	})
}

// Reuse of a request whose files the window has read fills the lists in
// the same UI turn (from app's caches, no FFprobe or FFmpeg run): a new
// user saw empty lists for about 3 s, and a Render click then would have
// rendered without references.
func TestReuseFillsListsAtOnce(t *testing.T) {
	h := newHarness(t)
	still, clip, voice := fixtures(t)
	h.drop(still, clip, voice)
	h.waitSettled()
	var req app.Request
	h.run(func() {
		var err error
		if req, err = h.s.Request(); err != nil {
			t.Fatal(err)
		}
		h.s.clearRefs()
	})
	h.waitSettled()
	h.run(func() {
		h.s.Restore(req)
		if got := [3]int{len(h.s.images.items), len(h.s.videos.items), len(h.s.audio.items)}; got != [3]int{1, 1, 1} || h.s.loading != 0 {
			t.Errorf("right after Reuse: pictures, videos, audio %v (loading %d), want 1 each at once", got, h.s.loading)
		}
		if h.s.notice.Text != app.RestoredFromHistoryText {
			t.Errorf("notice %q", h.s.notice.Text)
		}
		// Reuse is one step: Undo takes the lists back to empty.
		h.s.Undo()
		if n := len(h.s.images.items) + len(h.s.videos.items) + len(h.s.audio.items); n != 0 {
			t.Errorf("after Undo of Reuse: %d references", n)
		}
	})
}

// Reuse of files the window has not read says so and keeps Render waiting
// until they are in; then the request is the one reused.
func TestReuseReadsUnknownFiles(t *testing.T) {
	h := newHarness(t)
	dir := t.TempDir()
	red := flatPNG(t, dir, "red.png", color.NRGBA{R: 255, A: 255})
	req := app.Request{Prompt: "a red square", Width: 64, Height: 64, Frames: 22, Seed: 7,
		References: []app.Reference{{Kind: app.RefImage, Path: red}, {Kind: app.RefImage, Path: filepath.Join(dir, "gone.png")}}}
	h.run(func() {
		h.s.Restore(req)
		if h.s.loading == 0 || !strings.HasPrefix(h.s.notice.Text, "Restoring the settings; reading 2 references") {
			t.Errorf("while reading: loading %d, notice %q", h.s.loading, h.s.notice.Text)
		}
	})
	h.waitSettled()
	h.run(func() {
		if p := paths(h.s.images.items); len(p) != 1 || p[0] != red {
			t.Errorf("pictures %v, want [%s]", p, red)
		}
		if !strings.Contains(h.s.notice.Text, "Not added: gone.png") {
			t.Errorf("notice %q does not name the missing file", h.s.notice.Text)
		}
	})
}

// A request with only a last frame comes back with it in the Last slot.
func TestRestoreLastFrameOnly(t *testing.T) {
	h := newHarness(t)
	blue := flatPNG(t, t.TempDir(), "blue.png", color.NRGBA{B: 255, A: 255})
	h.run(func() {
		h.s.Restore(app.Request{Prompt: "ends on blue", Width: 64, Height: 64, Frames: 22, Seed: 3, LastFrame: blue})
	})
	h.waitSettled()
	if first, last := h.anchors(); first != "" || last != blue {
		t.Errorf("first %q, last %q; want the last frame only", first, last)
	}
	h.run(func() {
		got, err := h.s.Request()
		if err != nil {
			t.Fatal(err)
		}
		if got.FirstFrame != "" || got.LastFrame != blue {
			t.Errorf("request first %q last %q", got.FirstFrame, got.LastFrame)
		}
	})
}

// Settings refuses a model folder the engine cannot open (the CLI's -d
// check), says why under the fields and keeps the dialog open; a new user
// saved /tmp as the model folder.
func TestSettingsRefusesAFolderThatIsNoModel(t *testing.T) {
	h := newHarness(t)
	h.waitSettled()
	notModel := t.TempDir()
	h.run(func() {
		h.s.ShowSettings()
		h.s.settings.model.SetText(notModel)
		test.Tap(h.dialogButton("Save"))
	})
	h.waitFor("the check", 10*time.Second, func() bool { return !h.s.settings.save.Disabled() })
	h.run(func() {
		f := h.s.settings
		want := app.Advice(app.CheckModelFolder(notModel))
		if !hasDialog(h.s.win.Canvas()) || f.model.Text != notModel || f.problem.Text != want || !strings.Contains(want, "not a usable MiniMax-H3 model") {
			t.Errorf("dialog open %v, field %q, problem %q (want %q)", hasDialog(h.s.win.Canvas()), f.model.Text, f.problem.Text, want)
		}
		// Under the fields, not drawn over them.
		if form := f.body.Objects[0]; f.problem.Position().Y < form.Position().Y+form.Size().Height || f.problem.Size().Height < form.MinSize().Height/8 {
			t.Errorf("the reason at %v size %v overlaps the fields (%v high)", f.problem.Position(), f.problem.Size(), form.Size().Height)
		}
		if h.s.model != "" || h.s.app.Preferences().String(prefModel) != "" {
			t.Errorf("the folder was taken: model %q", h.s.model)
		}
		f.model.SetText("")
		test.Tap(h.dialogButton("Save"))
	})
	h.waitFor("the settings to close", 10*time.Second, func() bool { return !hasDialog(h.s.win.Canvas()) })
}
