package ui

import (
	"strings"
	"testing"

	"h3studio/app"
)

// The plan panel and the length line speak the user's words: the machine
// named as what it is (a new user on Linux read "Fits this Mac"), the
// memory peak by what the app is doing then, not "(mux)", and a rounded
// length with its reason instead of "(17n+5)".
func TestPlanPanelSpeaksPlainly(t *testing.T) {
	h := newHarness(t)
	mc, err := app.LookupMachine("auto")
	if err != nil {
		t.Fatal(err)
	}
	want := "Fits this machine"
	if mc.Mac() {
		want = "Fits this Mac"
	}
	h.run(func() {
		h.s.cfg.Machine = "auto" // the machine the tests run on
		h.s.ed.width.SetText("64")
		h.s.ed.height.SetText("64")
		h.s.ed.unit.SetSelected(unitFrames)
		h.s.ed.length.SetText("50")
	})
	h.waitSettled()
	h.run(func() {
		p := h.s.plan
		if p.verdict.Text != want {
			t.Errorf("verdict %q on %s, want %q", p.verdict.Text, mc.Name, want)
		}
		if head := p.memHead.Text; !strings.HasPrefix(head, "Memory, at its peak while ") || strings.Contains(p.memText, "(") {
			t.Errorf("memory %q, %q: want the peak's phase in words", head, p.memText)
		}
		if got := h.s.ed.aligned.Text; got != "→ 56 frames = 2.33 s at 24 fps, rounded up: "+app.FramesRuleText || strings.Contains(got, "17n") {
			t.Errorf("length line %q", got)
		}
	})
}
