package app

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// TurboPreset is the preset name that takes its steps and shifts from the
// request's few-step (Turbo) LoRA; explicit --steps and shifts win.
const TurboPreset = "turbo"

// Turbo is a few-step adapter's published recommendation. Steps counts DiT
// forwards (h3.c's --steps; diffusers' num_inference_steps is one more).
type Turbo struct {
	Name       string  // the family, as its publisher names it
	Partition  string  // fl2va or ref2va
	Steps      int     // the recommended forwards
	VideoShift float64 // sigma shifts
	AudioShift float64
}

// turboFamilies are the known Turbo adapters, matched on file-name tokens
// (all must occur; the first match wins). Sources: larryvrh's model card and
// its users (vpipe docs, mlx-h3 #6, SGLang #33875) and ModelTC's
// Minimax-H3-Turbo README with vllm-omni #7062 (lightx2v).
var turboFamilies = []struct {
	tokens []string
	t      Turbo
}{
	// v4-600 EMA: 6-8 forwards, 4 smears fast motion.
	{[]string{"turbo", "v4_step600"}, Turbo{"larryvrh Turbo v4-600", "fl2va", 6, 12, 3}},
	{[]string{"turbo", "ckpt850"}, Turbo{"larryvrh Turbo v1-850", "fl2va", 4, 12, 3}},
	{[]string{"turbo", "ckpt500"}, Turbo{"larryvrh Turbo ckpt500", "fl2va", 4, 12, 3}},
	// lightx2v: 768p files use video shift 6 (the Ref2VA 8-step 768p is
	// disputed, 6 vs 12: the publisher's reply and vllm-omni say 6).
	{[]string{"ref2v", "turbo", "8step", "768p"}, Turbo{"lightx2v Ref2VA Turbo 8-step 768p", "ref2va", 8, 6, 3}},
	{[]string{"ref2v", "turbo", "4step"}, Turbo{"lightx2v Ref2VA Turbo 4-step", "ref2va", 4, 12, 3}},
	{[]string{"fl2v", "turbo", "8step", "768p"}, Turbo{"lightx2v FL2VA Turbo 8-step 768p", "fl2va", 8, 6, 3}},
	{[]string{"fl2v", "turbo", "4step", "768p"}, Turbo{"lightx2v FL2VA Turbo 4-step 768p", "fl2va", 4, 6, 3}},
	{[]string{"fl2v", "turbo", "8step"}, Turbo{"lightx2v FL2VA Turbo 8-step", "fl2va", 8, 12, 3}},
	{[]string{"fl2v", "turbo", "4step"}, Turbo{"lightx2v FL2VA Turbo 4-step", "fl2va", 4, 12, 3}},
}

// TurboFor is the recommendation for the adapter file at path, if it is a
// known Turbo adapter.
func TurboFor(path string) (Turbo, bool) {
	n := strings.ToLower(filepath.Base(path))
	for _, f := range turboFamilies {
		all := true
		for _, tok := range f.tokens {
			all = all && strings.Contains(n, tok)
		}
		if all {
			return f.t, true
		}
	}
	return Turbo{}, false
}

// TurboLoRA is the recommendation of the request's first known Turbo LoRA
// that is on (strength not 0); the window offers the Turbo preset while
// there is one.
func (r Request) TurboLoRA() (Turbo, bool) {
	for _, l := range r.LoRAs {
		if t, ok := TurboFor(l.Path); ok && l.Strength != 0 {
			return t, true
		}
	}
	return Turbo{}, false
}

// applyTurbo fills the steps and shifts r leaves zero from its Turbo LoRA.
func applyTurbo(r Request) (Request, error) {
	t, ok := r.TurboLoRA()
	if !ok {
		return r, &FlagError{Msg: "the Turbo preset needs a Turbo LoRA (larryvrh's or lightx2v's MiniMax-H3 Turbo file); add one, or choose another preset", Flag: "--preset turbo --lora FILE"}
	}
	if r.Steps == 0 {
		r.Steps = t.Steps
	}
	if r.VideoShift == 0 {
		r.VideoShift = t.VideoShift
	}
	if r.AudioShift == 0 {
		r.AudioShift = t.AudioShift
	}
	return r, nil
}

// TurboText says what the Turbo preset will do with r's adapter, for the
// window's preset picker ("" when r has no known Turbo LoRA).
func TurboText(r Request) string {
	t, ok := r.TurboLoRA()
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s: %d steps, shifts %g/%g", t.Name, t.Steps, t.VideoShift, t.AudioShift)
}

// TurboFieldText is what an empty steps or shift field shows while the
// Turbo preset is chosen: the value it will take.
func TurboFieldText(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64) + " (Turbo)"
}
