package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/media"
)

func init() {
	register(Command{
		Name:    "plan",
		Summary: "count tokens, rows, memory and time for a request and fit it to a Mac",
		Run:     runPlan,
	})
}

func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("plan", stderr)
	var r Request
	bindRequestFlags(fs, &r)
	asJSON := fs.Bool("json", false, "print the plan as one JSON object")
	memGB := fs.Float64("memory-gb", 0, "memory budget in GB (overrides the machine profile's)")
	maxSeq := fs.Int("max-sequence", 0, "Qwen sequence limit of the backend (0: none; 7936 is h3.c's Metal kernel)")
	noFit := fs.Bool("no-fit", false, "report the request as given, without fitting it")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: h3studio plan [request flags] [--model PROFILE|DIR] [--machine NAME|auto] [--memory-gb N] [--max-sequence N] [--json]")
		fs.PrintDefaults()
	}
	if err := parseRequestFlags(fs, &r, args); err != nil {
		return err
	}
	if *memGB < 0 || *maxSeq < 0 {
		return &UsageError{Msg: "--memory-gb and --max-sequence must not be negative"}
	}
	cacheDir, err := userCacheDir()
	if err != nil {
		return err
	}
	// The renderer's planning path, so the plan is the one a render of
	// the same request runs (its presets, tokenizer, partition check).
	rd := &Renderer{CacheDir: cacheDir, HistoryDir: filepath.Join(cacheDir, "history"), MemoryGB: *memGB, PlanOptions: plan.Options{MaxSequence: *maxSeq, NoFit: *noFit},
		Logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	defer rd.Close()
	if r, err = withModelFlags(fs, rd, r); err != nil {
		return err
	}
	p, err := rd.Plan(ctx, r)
	if err != nil {
		if *asJSON && plan.IsLimit(err) {
			// Scripts get the refusal as data too.
			refusal := map[string]any{"verdict": plan.Refused, "error": TerminalAdvice(err), "warnings": []string{}}
			if jerr := json.NewEncoder(stdout).Encode(refusal); jerr != nil {
				return errors.Join(err, jerr)
			}
		}
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(p); err != nil {
			return err
		}
	} else if err := printPlan(stdout, p); err != nil {
		return err
	}
	if p.Verdict == plan.Refused {
		// The sentence render and the window give, with exit status 1
		// (the plan answered; only the request does not fit).
		return errors.New(TerminalAdvice(&RefusedError{Plan: p}))
	}
	return nil
}

// PlanRequest converts a Request for the planner, probing every reference
// and anchor's header (no decode; through the probe cache).
func PlanRequest(ctx context.Context, r Request) (plan.Request, error) {
	policy, err := layout.ParseImagePolicy(r.RefImageSize)
	if err != nil {
		return plan.Request{}, err
	}
	clips, err := layout.ParseClipPolicy(r.RefClipSize)
	if err != nil {
		return plan.Request{}, err
	}
	pr := plan.Request{
		Canvas:         layout.Canvas{Width: r.Width, Height: r.Height},
		RenderCanvas:   layout.Canvas{Width: r.RenderWidth, Height: r.RenderHeight},
		Frames:         r.RequestedFrames(),
		ImagePolicy:    policy,
		ClipPolicy:     clips,
		Prompt:         r.Prompt,
		Steps:          r.Steps,
		Layers:         r.Layers,
		Reuse:          r.Reuse,
		CoreReuse:      r.CoreReuse,
		TokenReduction: r.TokenReduction,
		First:          r.FirstFrame,
		Last:           r.LastFrame,
		VideoShift:     r.VideoShift,
		AudioShift:     r.AudioShift,
	}
	if pr.LoRAs, err = planLoRAs(r); err != nil {
		return pr, err
	}
	for _, a := range []struct {
		path string
		size *layout.Canvas
	}{{r.FirstFrame, &pr.FirstSize}, {r.LastFrame, &pr.LastSize}} {
		if a.path == "" {
			continue
		}
		info, err := Probe(ctx, a.path)
		if err != nil {
			return pr, err
		}
		if info.Kind != media.KindImage {
			return pr, fmt.Errorf("anchor %s is %s, not an image; first and last frames are stills", a.path, info.Kind)
		}
		if err := VerifyImage(ctx, a.path); err != nil {
			return pr, err
		}
		*a.size = layout.Canvas{Width: info.Width, Height: info.Height}
	}
	for i, ref := range r.References {
		pref, err := probeReference(ctx, i, ref)
		if err != nil {
			return pr, err
		}
		pr.Refs = append(pr.Refs, pref)
	}
	return pr, nil
}

// probeReference reads one reference's header and checks it is what its
// flag says.
func probeReference(ctx context.Context, i int, ref Reference) (plan.Reference, error) {
	info, err := Probe(ctx, ref.Path)
	if err != nil {
		return plan.Reference{}, err
	}
	kind, err := layout.ParseRefKind(ref.Kind)
	if err != nil {
		return plan.Reference{}, err
	}
	pref := plan.Reference{Kind: kind, Path: ref.Path, AudioPath: ref.AudioPath, Media: planMedia(info)}
	where := fmt.Sprintf("reference %d (%s)", i+1, ref.Path)
	switch kind {
	case layout.RefImage:
		if info.Kind != media.KindImage {
			return pref, &FlagError{Msg: fmt.Sprintf("%s is %s, not a picture", where, info.Kind), Flag: "give it with the --ref flag of its kind"}
		}
		if err := VerifyImage(ctx, ref.Path); err != nil {
			return pref, err
		}
	case layout.RefVideo, layout.RefVideoAudio:
		if info.Kind != media.KindVideo && info.Kind != media.KindVideoAudio {
			return pref, fmt.Errorf("%s is %s, not a video", where, info.Kind)
		}
		if kind == layout.RefVideo {
			pref.Media.AudioSeconds = 0
			break
		}
		if ref.AudioPath == "" {
			if !info.HasAudio() {
				return pref, &FlagError{Msg: where + " has no soundtrack; use it as a silent clip, or add a soundtrack to it",
					Flag: "--ref-silent-video, or --ref-video-audio VIDEO AUDIO"}
			}
			break
		}
		a, err := Probe(ctx, ref.AudioPath)
		if err != nil {
			return pref, err
		}
		if !a.HasAudio() {
			return pref, fmt.Errorf("%s: soundtrack %s has no audio stream", where, ref.AudioPath)
		}
		pref.Media.AudioSeconds = a.DurationS
	case layout.RefAudio:
		if !info.HasAudio() {
			return pref, fmt.Errorf("%s has no audio stream", where)
		}
		pref.Media.DurationS = info.DurationS
	}
	return pref, nil
}

// planMedia converts a probe's answer to the planner's header struct.
func planMedia(info media.Info) plan.Media {
	m := plan.Media{Width: info.Width, Height: info.Height, DurationS: info.DurationS, FPS: info.FPS, Frames: info.Frames, AudioRate: info.AudioRate}
	if info.HasAudio() {
		m.AudioSeconds = info.DurationS
	}
	return m
}

// printPlan writes the plan as a readable report.
func printPlan(w io.Writer, p *plan.Plan) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "task %s on the %s partition; model %s; machine %s\n", p.Task, p.Partition, p.Model, p.Machine)
	fmt.Fprintf(tw, "canvas %s (model runs at %s), %d frames = %.2f s\n", p.Canvas, p.RenderCanvas, p.Frames, p.Seconds)
	est := ""
	if p.TextTokens.Estimated {
		est = ", estimated"
	}
	fmt.Fprintf(tw, "Qwen sequence %d tokens (prompt %d%s, labels %d, vision %d)\n", p.TextTokens.Total, p.TextTokens.Prompt, est, p.TextTokens.Labels, p.TextTokens.Vision)
	if len(p.References) > 0 {
		fmt.Fprintln(tw, "\n#\tkind\tpath\tcanvas\tQwen\tDiT rows\tnote")
		for i, rp := range p.References {
			var note []string
			if rp.ScaledFrom != nil {
				note = append(note, "from "+rp.ScaledFrom.String())
			}
			if rp.Pool.Temporal > 1 {
				note = append(note, fmt.Sprintf("Qwen blocks pooled %dx in time", rp.Pool.Temporal))
			}
			if rp.Pool.Spatial > 1 {
				note = append(note, fmt.Sprintf("Qwen tokens pooled %dx%d", rp.Pool.Spatial, rp.Pool.Spatial))
			}
			if rp.Frames > 0 {
				note = append(note, fmt.Sprintf("%d frames", rp.Frames))
			}
			if rp.Seconds > 0 {
				note = append(note, fmt.Sprintf("%.1f s audio", rp.Seconds))
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\n", i+1, rp.Kind, rp.Path, rp.Canvas, rp.QwenTokens, rp.DiTRows, strings.Join(note, ", "))
		}
	}
	d := p.DiTRows
	fmt.Fprintf(tw, "\nDiT rows %d: text %d, conditions %d, references %d, audio %d, video %d\n", d.Total, d.Text, d.Conditions, d.References, d.Audio, d.Video)
	for _, l := range p.LoRAs {
		fmt.Fprintf(tw, "LoRA %s\n", LoRAPlanText(l.Path, l))
	}
	fmt.Fprintf(tw, "\nmemory: peak %s %s, budget %s\n", GBText(p.Memory.PeakBytes), MemoryPhaseText(p.Memory.PeakPhase), GBText(p.Memory.BudgetBytes))
	fmt.Fprintln(tw, "phase\tpeak\tweights\tscratch\tmedia\tcarried\tresidency")
	for _, ph := range p.Memory.Phases {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", ph.Name, GBText(ph.PeakBytes), GBText(ph.WeightsBytes), GBText(ph.ScratchBytes), GBText(ph.MediaBytes), GBText(ph.CarriedBytes), ph.Residency)
	}
	if src := p.Memory.BudgetSource; src == plan.SourceOverride {
		fmt.Fprintln(tw, "budget set by the user (--memory-gb)")
	} else {
		fmt.Fprintf(tw, "budget = working set (from %s) - %s reserve\n", src, GBText(plan.Reserve))
	}
	if len(p.Decisions) > 0 {
		fmt.Fprintln(tw, "\ndecisions:")
		for i, dc := range p.Decisions {
			fmt.Fprintf(tw, "%d. %s (%s): %s\n", i+1, dc.Kind, dc.Target, dc.Reason)
		}
	}
	t := p.Time
	fmt.Fprintf(tw, "\ntime %s; %d DiT forwards of %s\n", EstimateText(t), t.Forwards, FLOPText(t.ForwardTFLOP))
	for _, wn := range p.Warnings {
		fmt.Fprintf(tw, "warning: %s\n", wn)
	}
	fmt.Fprintf(tw, "verdict: %s", p.Verdict)
	if p.Error != "" {
		fmt.Fprintf(tw, ": %s", p.Error)
	}
	fmt.Fprintln(tw)
	return tw.Flush()
}
