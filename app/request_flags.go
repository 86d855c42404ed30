package app

import (
	"flag"
	"fmt"
	"h3studio/engine/plan"
	"strings"
)

// refList is a flag.Value that appends references of one kind to the
// request's single ordered list, so repeated --ref-* flags keep the order
// they were given in across kinds.
type refList struct {
	refs *[]Reference
	kind string
}

func (l refList) String() string { return "" }

func (l refList) Set(v string) error {
	ref := Reference{Kind: l.kind, Path: v}
	if l.kind == RefVideoAudio {
		if video, audio, ok := strings.Cut(v, pairSep); ok {
			ref.Path, ref.AudioPath = video, audio
		}
	}
	*l.refs = append(*l.refs, ref)
	return nil
}

// pairSep joins --ref-video-audio's two operands into one flag value; a
// NUL cannot occur in a path.
const pairSep = "\x00"

// pairFlags take two operands (VIDEO AUDIO).
var pairFlags = map[string]bool{"ref-video-audio": true}

// joinPairArgs rewrites "--ref-video-audio VIDEO AUDIO" (and the
// "=VIDEO AUDIO" form) into one flag value, since the flag package reads
// a single operand per flag.
func joinPairArgs(args []string) ([]string, error) {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") || len(a)-len(name) > 2 {
			out = append(out, a)
			continue
		}
		key, val, hasVal := strings.Cut(name, "=")
		if !pairFlags[key] {
			out = append(out, a)
			continue
		}
		need := 2
		if hasVal {
			need = 1
		}
		if i+need >= len(args) {
			return nil, &UsageError{Msg: fmt.Sprintf("--%s needs two files: VIDEO AUDIO", key)}
		}
		if hasVal {
			out = append(out, "--"+key+"="+val+pairSep+args[i+1])
			i++
		} else {
			out = append(out, "--"+key+"="+args[i+1]+pairSep+args[i+2])
			i += 2
		}
	}
	return out, nil
}

// bindRequestFlags defines the h3.c-compatible request flags on fs,
// writing into r. Shared by plan and render.
func bindRequestFlags(fs *flag.FlagSet, r *Request) {
	fs.StringVar(&r.Model, "d", "", "model: snapshot directory, demo (the "+DemoModelText+", the default), tiny (the "+TinyModelText+"), or a profile for planning (official-bf16, official-q8_0, official-q4_k, comfy-bf16)")
	fs.StringVar(&r.Model, "model", "", "same as -d")
	fs.StringVar(&r.Prompt, "p", "", "prompt")
	fs.StringVar(&r.Prompt, "prompt", "", "same as -p")
	// The canvas, length and steps default to the model's, which is known
	// only once -d is parsed (withModelFlags).
	fs.IntVar(&r.Width, "width", 0, fmt.Sprintf("output width in pixels (multiple of 32; default the model's, %d for the release)", DefaultWidth))
	fs.IntVar(&r.Height, "height", 0, fmt.Sprintf("output height in pixels (multiple of 32; default the model's, %d for the release)", DefaultHeight))
	fs.IntVar(&r.Frames, "frames", 0, fmt.Sprintf("output frames at 24 fps, rounded up where needed: %s (default the model's, %d for the release)", FramesRuleText, DefaultFrames))
	fs.Float64Var(&r.Seconds, "seconds", 0, "output length in seconds (instead of --frames), rounded up as --frames is")
	fs.IntVar(&r.Steps, "steps", 0, fmt.Sprintf("denoising passes (default the preset's, else the model's, %d for the release)", plan.DefaultSteps))
	fs.Int64Var(&r.Seed, "seed", 0, "random seed")
	fs.IntVar(&r.Layers, "layers", 0, "active DiT blocks, 35..50 (default all)")
	fs.IntVar(&r.Reuse, "reuse", 0, "evaluate the denoiser every k-th step and extrapolate between")
	fs.IntVar(&r.CoreReuse, "core-reuse", 0, "reuse the cached core residual every k steps")
	fs.BoolVar(&r.TokenReduction, "token-reduction", false, "pair horizontal video tokens inside the middle blocks (faster, may change composition)")
	fs.IntVar(&r.RenderWidth, "render-width", 0, "run the model on this smaller width and upscale (with --render-height)")
	fs.IntVar(&r.RenderHeight, "render-height", 0, "run the model on this smaller height and upscale")
	fs.StringVar(&r.FirstFrame, "first-frame", "", "FL2VA first frame image")
	fs.StringVar(&r.LastFrame, "last-frame", "", "FL2VA last frame image")
	fs.Var(refList{&r.References, RefImage}, "ref-image", "reference image (repeatable; order matters)")
	fs.Var(refList{&r.References, RefVideoAudio}, "ref-video", "reference clip with its soundtrack (repeatable)")
	fs.Var(refList{&r.References, RefVideo}, "ref-silent-video", "reference clip without its sound (repeatable)")
	fs.Var(refList{&r.References, RefVideoAudio}, "ref-video-audio", "reference clip with a replacement soundtrack: VIDEO AUDIO (repeatable)")
	fs.Var(refList{&r.References, RefAudio}, "ref-audio", "reference audio clip, 2-15 s (repeatable)")
	fs.StringVar(&r.RefClipSize, "ref-clip-size", "official", "reference clip canvas: official (the 768-class canvas of the clip's aspect, enlarging small clips: the official pipeline) or source (never enlarge: ComfyUI and h3.c, cheaper)")
	fs.StringVar(&r.RefImageSize, "ref-image-size", DefaultRefImageSize, "reference image sizing: official (2048 short edge, upscaling: the official pipeline), max (2048, never upscaling) or match (the output's area: ComfyUI and h3.c)")
	fs.Var(loraList{&r.LoRAs}, "lora", "apply a LoRA adapter at run time: FILE[:STRENGTH][:flat|interleaved] (default strength 1; the qkv row order is read from the file unless given; repeatable, stacked)")
	fs.Float64Var(&r.VideoShift, "video-shift", 0, "sigma shift of the video schedule (0: the model's, 12; Turbo LoRAs bring their own with --preset turbo)")
	fs.Float64Var(&r.AudioShift, "audio-shift", 0, "sigma shift of the audio schedule (0: the model's, 3)")
	fs.StringVar(&r.Output, "o", "", "output MP4 path")
	fs.StringVar(&r.FramesDir, "frames-dir", "", "also write the frames to this folder")
	fs.StringVar(&r.Preset, "preset", "", "quality preset: the model's (the release's: reference, default, balanced, fast, aggressive), or turbo (the steps and shifts of the request's Turbo LoRA)")
	fs.StringVar(&r.Machine, "machine", "auto", "machine profile (e.g. m5-max-128) or auto")
}

// withModelFlags gives the canvas, length and steps flags left unset the
// request's model's defaults, as flag defaults would have been had the
// model been known before -d was parsed: the request recorded in the
// history and the clip says what was made. A model that declares nothing
// gets the release's canvas and steps and keeps its length unset, as
// before models could declare defaults.
func withModelFlags(fs *flag.FlagSet, rd *Renderer, r Request) (Request, error) {
	d, err := rd.Defaults(r.Model)
	if err != nil {
		return r, err
	}
	if !flagSet(fs, "width") {
		r.Width = d.Width
	}
	if !flagSet(fs, "height") {
		r.Height = d.Height
	}
	if d.Declared && !flagSet(fs, "frames") && !flagSet(fs, "seconds") {
		r.Frames = d.Frames
	}
	if r.Preset == "" && !flagSet(fs, "steps") {
		r.Steps = d.Steps // a preset's step count wins unless --steps was given
	}
	return r, nil
}

// parseRequestFlags parses args into a request (flags defined by
// bindRequestFlags plus any the caller added to fs) and validates it.
func parseRequestFlags(fs *flag.FlagSet, r *Request, args []string) error {
	args, err := joinPairArgs(args)
	if err != nil {
		return err
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: fmt.Sprintf("unexpected argument %q (quote the prompt: -p \"...\")", fs.Arg(0))}
	}
	// Zero means "the default" in a Request; given on the command line it
	// is a number the model cannot take, refused rather than replaced.
	for _, f := range []struct {
		name, what string
		zero       bool
	}{{"frames", "the length must be positive, not 0 frames", r.Frames == 0},
		{"seconds", "the length must be positive, not 0 s", r.Seconds == 0},
		{"steps", "the step count must be at least 1", r.Steps == 0},
		{"width", "the width must be positive, not 0", r.Width == 0},
		{"height", "the height must be positive, not 0", r.Height == 0}} {
		if f.zero && flagSet(fs, f.name) {
			return &UsageError{Msg: TerminalAdvice(&FlagError{Msg: f.what, Flag: "--" + f.name})}
		}
	}
	if err := r.Validate(); err != nil {
		return &UsageError{Msg: oneLine(TerminalAdvice(err))}
	}
	return nil
}
