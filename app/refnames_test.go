package app

import (
	"path/filepath"
	"strings"
	"testing"
)

// A reference that breaks a rule of the model is named in the message as
// the window's lists name it, with the file as the user named it: the
// short wav after another audio file is "Audio 2 (short.wav)", not
// "reference 3 (/full/path/short.wav)".
func TestPlanNamesReferenceAsListed(t *testing.T) {
	fx := fixtures(t)
	code, _, errs := runMain("plan", "--model", "official-q4_k", "--machine", "m5-max-128", "-p", "a fox", "--width", "256", "--height", "256", "--frames", "56",
		"--ref-image", fx.image1, "--ref-audio", fx.audio, "--ref-audio", fx.audio1s)
	if code == 0 {
		t.Fatalf("a 1 s audio reference was planned: %s", errs)
	}
	if !strings.Contains(errs, "Audio 2 (short.wav): audio is 1.0 s") {
		t.Errorf("stderr %q: want the reference named Audio 2 (short.wav)", errs)
	}
	if strings.Contains(errs, filepath.Dir(fx.audio1s)) || strings.Contains(errs, "reference 3") {
		t.Errorf("stderr %q names the reference by place or full path", errs)
	}
}

func TestRefLabels(t *testing.T) {
	refs := []Reference{{Kind: RefImage}, {Kind: RefVideoAudio}, {Kind: RefImage}, {Kind: RefAudio}, {Kind: RefVideo}, {Kind: RefAudio}}
	got := strings.Join(RefLabels(refs), ",")
	if want := "Picture 1,Video 1,Picture 2,Audio 1,Video 2,Audio 2"; got != want {
		t.Errorf("labels %s, want %s", got, want)
	}
	if RefLabel(RefVideoAudio, 3) != "Video 3" {
		t.Errorf("RefLabel(video+audio, 3) = %q", RefLabel(RefVideoAudio, 3))
	}
}

// The check made when a file is added is the plan's own: a 1 s wav and a
// text file are refused with a reason, a 2.2 s wav and a picture pass.
func TestCheckReference(t *testing.T) {
	fx := fixtures(t)
	for _, c := range []struct {
		ref  Reference
		want string // "" passes
	}{
		{Reference{Kind: RefAudio, Path: fx.audio}, ""},
		{Reference{Kind: RefImage, Path: fx.image1}, ""},
		{Reference{Kind: RefAudio, Path: fx.audio1s}, "short.wav: audio is 1.0 s; audio references need at least 2 s"},
		{Reference{Kind: RefImage, Path: fx.text}, "notes.txt: " + unreadableText},
		{Reference{Kind: RefImage, Path: filepath.Join(t.TempDir(), "gone.png")}, "gone.png: " + missingText},
	} {
		err := CheckReference(t.Context(), c.ref)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", filepath.Base(c.ref.Path), got, c.want)
		}
	}
}
