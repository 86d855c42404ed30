package app

import (
	"fmt"
	"math"
	"strings"

	"h3studio/engine"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/media"
)

// GBText prints bytes in the GB Apple sells and Activity Monitor shows
// (2^30 bytes), the unit the machine profiles' sizes are in. The CLI and
// the window both print sizes with it, so they never disagree on a unit.
// Below 1 GB it keeps two decimals: the tiny model's peaks and small
// budgets would otherwise all read "0.0 GB" or "0.1 GB" (a refusal said
// "over this machine's 0.0 GB budget").
func GBText(b int64) string {
	gb := float64(b) / (1 << 30)
	if b > 0 && b < 1<<30 {
		return fmt.Sprintf("%.2f GB", gb)
	}
	return fmt.Sprintf("%.1f GB", gb)
}

// FLOPText is a DiT forward's work: TFLOP at release size, GFLOP below a
// tenth of one, where the demo model's forwards all read "0.0 TFLOP".
func FLOPText(tflop float64) string {
	if tflop > 0 && tflop < 0.1 {
		return fmt.Sprintf("%.1f GFLOP", tflop*1000)
	}
	return fmt.Sprintf("%.1f TFLOP", tflop)
}

// DurationText prints an estimate or a wall time in seconds at the
// precision that means something: tenths below 10 s, where the tiny
// model's phases fall and "0 s" would hide them; whole seconds, minutes
// and tenths of an hour above.
func DurationText(s float64) string {
	switch {
	case s >= 3600:
		return fmt.Sprintf("%.1f h", s/3600)
	case s >= 60:
		return fmt.Sprintf("%.0f min", s/60)
	case s >= 10:
		return fmt.Sprintf("%.0f s", s)
	}
	return fmt.Sprintf("%.1f s", s)
}

// StatsText is a finished run in a few words: its wall time and, where the
// OS reports it, the peak memory.
func StatsText(st *engine.Stats) string {
	if st == nil {
		return ""
	}
	s := DurationText(st.Total.Seconds())
	if st.PeakBytes > 0 {
		s += ", peak memory " + GBText(st.PeakBytes)
	}
	return s
}

// PhaseTitle names an engine phase for people.
func PhaseTitle(p engine.Phase) string {
	switch p {
	case engine.PhasePlan:
		return "Planning"
	case engine.PhaseLoad:
		return "Loading weights"
	case engine.PhasePreview:
		return "Fitting the step preview"
	case engine.PhaseReferences:
		return "Reading references"
	case engine.PhaseEncode:
		return "Encoding prompt"
	case engine.PhaseDenoise:
		return "Denoising"
	case engine.PhaseDecode:
		return "Decoding"
	case engine.PhaseMux:
		return "Writing the MP4"
	}
	return string(p)
}

// EstimateText is a plan's time in words, phase by phase, with where its
// rates came from; the plan panel and `h3studio plan` both print it, so
// they show the same estimate the progress counts down from.
func EstimateText(t plan.Estimate) string {
	parts := make([]string, 0, len(t.Phases))
	for _, pc := range t.Phases {
		if pc.Seconds > 0 {
			title := PhaseTitle(engine.Phase(pc.Phase))
			parts = append(parts, strings.ToLower(title[:1])+title[1:]+" "+estimateDuration(pc.Seconds))
		}
	}
	src := map[string]string{
		plan.SourcePeak:        "from the chip's peak speed, not yet measured",
		plan.SourceCalibration: "measured on this machine",
		plan.SourceHistory:     "measured on this machine and its finished renders",
	}[t.Source]
	s := "about " + DurationText(t.Seconds)
	if t.Seconds < shortestEstimate {
		s = estimateDuration(t.Seconds)
	}
	if len(parts) > 0 {
		s += ": " + strings.Join(parts, ", ")
	}
	if src != "" {
		s += " (" + src + ")"
	}
	return s
}

// shortestEstimate is the least time an estimate names: a small model's
// estimate from the chip's peak speed can be a few milliseconds, which
// DurationText would print as "0.0 s".
const shortestEstimate = 0.1

func estimateDuration(s float64) string {
	if s < shortestEstimate {
		return "under " + DurationText(shortestEstimate)
	}
	return DurationText(s)
}

// TimecodeText is frame i (counted from 0) of an n-frame clip as video
// editors print it: HH:MM:SS:FF at the clip's whole frame rate, FF
// restarting every second, then the frame counted from 1 ("00:00:00:21
// frame 22/22"). A new user read the old "00:00:21" as 21 seconds. With
// no clip (n 0) it is the time code alone.
func TimecodeText(i, n int, fps float64) string {
	f := int(math.Round(fps))
	if f <= 0 {
		f = media.FPS
	}
	s := i / f
	code := fmt.Sprintf("%02d:%02d:%02d:%02d", s/3600, s/60%60, s%60, i%f)
	if n <= 0 {
		return code
	}
	return fmt.Sprintf("%s  frame %d/%d", code, i+1, n)
}

// NoAudioDeviceText follows the time code when a clip's sound cannot play
// on this machine, so silence is not taken for a silent clip.
const NoAudioDeviceText = "no audio device"

// LoopText names the in and out points (frames counted from 0) by the
// frame numbers TimecodeText shows.
func LoopText(in, out int) string { return fmt.Sprintf("in %d · out %d", in+1, out+1) }

// ShuttleText is the J/K/L speed as editors show it: "2×" forward, "−2×"
// in reverse (a minus sign, not a hyphen), nothing when paused.
func ShuttleText(speed int) string {
	switch {
	case speed == 0:
		return ""
	case speed < 0:
		return fmt.Sprintf("−%d×", -speed)
	}
	return fmt.Sprintf("%d×", speed)
}

// TokensText is the plan's text-encoder line: the Qwen sequence and what
// it is made of, with the count's noun agreeing with it.
func TokensText(tt plan.TextTokens) string {
	est := ""
	if tt.Estimated {
		est = " (estimated)"
	}
	return fmt.Sprintf("Text encoder: %s — prompt %d%s, labels %d, vision %d", countText(tt.Total, "token"), tt.Prompt, est, tt.Labels, tt.Vision)
}

// RowsText is the plan's transformer line: the rows one denoising step
// attends over, by what they hold.
func RowsText(d layout.RowCounts) string {
	return fmt.Sprintf("Transformer rows: %d — video %d, audio %d, references %d, text %d, conditions %d", d.Total, d.Video, d.Audio, d.References, d.Text, d.Conditions)
}

// countText is "1 token", "2 tokens".
func countText(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// FramesRuleText is why a length is rounded up, in the words of people
// who count frames, not of the model's 17n+5; the editor and the CLI's
// length flags say the same.
const FramesRuleText = "clips are 5 frames more than a multiple of 17 (22, 39, 56…)"

// LengthText is the clip the model makes of a requested frame count, as
// the editor shows it under the length, saying why when it rounded up.
func LengthText(requested int) string {
	n := layout.AlignFrames(requested)
	s := fmt.Sprintf("→ %d frames = %.2f s at %d fps", n, float64(n)/layout.FPS, layout.FPS)
	if n != requested {
		s += ", rounded up: " + FramesRuleText
	}
	return s
}

// MemoryPeakText heads the plan panel's memory bar: when it peaks.
func MemoryPeakText(phase string) string { return "Memory, at its peak " + MemoryPhaseText(phase) }

// MemoryPhaseText is when a plan's memory peaks, for people: the
// planner's phase names ("mux", "vae-decode") are the code's.
func MemoryPhaseText(phase string) string {
	switch phase {
	case plan.PhaseLoad:
		return "while loading the weights"
	case plan.PhaseReference:
		return "while reading the references"
	case plan.PhaseText:
		return "while encoding the prompt"
	case plan.PhaseDenoise:
		return "while denoising"
	case plan.PhaseDecode:
		return "while decoding the frames"
	case plan.PhaseMux:
		return "while writing the MP4"
	}
	return "in " + phase
}

// MachineText names the machine a plan is for: "this Mac" only on one.
func MachineText(p *plan.Plan) string { return machineNoun(p.Mac) }

// machineNoun is "this Mac" on a Mac, "this machine" elsewhere (a new
// user on Linux read "Fits this Mac").
func machineNoun(mac bool) string {
	if mac {
		return "this Mac"
	}
	return "this machine"
}

// VerdictText is the plan panel's headline: "Fits this Mac", "Fits this
// machine", or what does not fit.
func VerdictText(p *plan.Plan) string {
	if p.Verdict == plan.Fits {
		return "Fits " + MachineText(p)
	}
	return "Does not fit: " + refusalReason(p)
}

// RefPlanText is one reference's line in the plan panel: what it costs
// the text encoder and the transformer, and the canvas it is read at.
func RefPlanText(name string, rp plan.RefPlan) string {
	s := fmt.Sprintf("%s: %s, %s", name, countText(rp.QwenTokens, "text token"), countText(rp.DiTRows, "transformer row"))
	if rp.Canvas.Width > 0 {
		s += " at " + rp.Canvas.String()
	}
	return s
}

// LoRAPlanText is one LoRA's line in a plan, the window's and the CLI's:
// its strength and the memory its factors hold beside the transformer
// ("turbo.safetensors at strength 1: 0.78 GB beside the transformer").
func LoRAPlanText(name string, l plan.LoRA) string {
	return fmt.Sprintf("%s at strength %g: %s beside the transformer", name, l.Strength, GBText(l.ResidentBytes))
}

// MemoryText is the meter beside a render's progress: the memory in use
// now against the plan's predicted peak ("0.31 GB of 0.35 GB planned"),
// with the GPU's share where the backend reports one. Without a plan
// (planned 0) it says what is in use; with nothing known, nothing.
func MemoryText(u MemoryUse, planned int64) string {
	now := u.Resident
	if now <= 0 {
		now = u.Device
	}
	if now <= 0 {
		return ""
	}
	s := GBText(now) + " in use"
	if planned > 0 {
		s = GBText(now) + " of " + GBText(planned) + " planned"
	}
	if u.Device > 0 && u.Resident > 0 {
		s += " · GPU " + GBText(u.Device)
	}
	return s
}
