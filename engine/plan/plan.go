package plan

import (
	"errors"
	"fmt"
	"math"

	"h3studio/engine/layout"
)

// Media is a reference's header, as a probe reports it (no decode). Width
// and Height are in display orientation.
type Media struct {
	Width, Height int
	DurationS     float64
	FPS           float64
	Frames        int
	AudioSeconds  float64 // soundtrack or audio file length (0 = none)
	// AudioRate is an audio file's sample rate (the official chain
	// resamples from it; a video's soundtrack is extracted at 44.1 kHz).
	AudioRate int
}

// framesAt24 is how many frames a bounded 24 fps decode yields.
func (m Media) framesAt24() int {
	switch {
	case m.DurationS > 0:
		return int(math.Round(m.DurationS * layout.FPS))
	case m.Frames > 0 && m.FPS > 0:
		return int(math.Round(float64(m.Frames) * layout.FPS / m.FPS))
	}
	return m.Frames
}

// Reference is one ordered reference of a request.
type Reference struct {
	Kind      layout.RefKind
	Path      string
	AudioPath string // video+audio with a replacement soundtrack
	Media     Media
}

// Request is what a generation makes: everything the planner counts and
// everything Generate runs beyond the seed and the media I/O. The plan
// keeps it (Plan.Request), so the request crosses into the engine once.
type Request struct {
	Canvas       layout.Canvas // output canvas
	RenderCanvas layout.Canvas // model canvas when rendering smaller (zero: the output canvas)
	Frames       int           // requested frames (aligned up to 17n+5)
	// Prompt is the text; Engine.Plan counts it into PromptTokens with the
	// snapshot's tokenizer (or estimates it without one, PromptEstimated).
	Prompt          string
	PromptTokens    int
	PromptEstimated bool
	First, Last     string        // FL2VA anchor paths
	FirstSize       layout.Canvas // anchors' source sizes (for decode buffers)
	LastSize        layout.Canvas
	Refs            []Reference
	ImagePolicy     layout.ImagePolicy
	ClipPolicy      layout.ClipPolicy
	Convention      layout.VideoConvention
	// Processor is the snapshot's Qwen processor budget (zero: the
	// release's); Engine.Plan fills it from the snapshot.
	Processor layout.QwenProcessor
	// RefShortEdge caps references' short edge (layout.Spec.RefShortEdge;
	// 0: the release's sizing); Engine.Plan fills it from the snapshot's
	// declaration.
	RefShortEdge int
	Steps        int // DiT forwards before reuse (default DefaultSteps)
	Layers       int // active DiT blocks (default all)
	Reuse        int // whole-denoiser reuse interval (default 1)
	// CoreReuse runs the DiT blocks every CoreReuse-th forward and reuses
	// their cached residual in between (h3.c --core-reuse; 0: off; not with
	// Reuse). TokenReduction pools target video rows in pairs inside the
	// middle blocks (h3.c --token-reduction). The planner does not model
	// either (neither changes a peak); Generate runs them.
	CoreReuse      int
	TokenReduction bool
	// LoRAs are the adapters applied at run time, in order (stacked).
	LoRAs []LoRA
	// VideoShift and AudioShift are the sigma schedule's shifts (0: the
	// partition's model_index.json, else 12 and 3); few-step adapters come
	// with their own (the Turbo preset). They change no size or time.
	VideoShift, AudioShift float64
	// Cached says what an earlier generation of the same engine already
	// prepared (Engine.Plan fills it from its cache); the estimate prices
	// it at nothing. It changes no size or memory.
	Cached Cached
}

// Cached marks inputs whose prepared form an engine holds: Refs by index
// of Request.Refs, Text for the Qwen encoding of the whole presentation.
type Cached struct {
	Refs []bool
	Text bool
}

// DefaultSteps is the step count of a request that leaves Steps zero
// (h3.c's default).
const DefaultSteps = 20

// Options are the backend's declarations.
type Options struct {
	// MaxSequence is a Qwen sequence limit the backend declares (0: none,
	// as for our tiled attention; 7936 reproduces h3.c's Metal kernel).
	MaxSequence int
	// NoFit reports the request as given, without fitting it.
	NoFit bool
}

// Decision is one automatic change, with its measured effect.
type Decision struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Reason string `json:"reason"`
	// Phase is the phase the decision relieved; PeakBefore/After are that
	// phase's peaks (the sequence fields show a Qwen sequence change).
	Phase          string `json:"phase"`
	PeakBefore     int64  `json:"peak_before_bytes"`
	PeakAfter      int64  `json:"peak_after_bytes"`
	SequenceBefore int    `json:"sequence_before"`
	SequenceAfter  int    `json:"sequence_after"`
}

// RefPlan is one reference as planned.
type RefPlan struct {
	Kind   string        `json:"kind"`
	Path   string        `json:"path"`
	Canvas layout.Canvas `json:"canvas"`
	// QwenCanvas is what the vision tower sees when the Qwen processor
	// resizes the canvas (a small picture grows, a long clip shrinks).
	QwenCanvas *layout.Canvas `json:"qwen_canvas,omitempty"`
	// VAEFrames is how many of a clip's Frames the video VAE encodes.
	VAEFrames  int            `json:"vae_frames,omitempty"`
	QwenTokens int            `json:"qwen_tokens"`
	DiTRows    int            `json:"dit_rows"`
	ScaledFrom *layout.Canvas `json:"scaled_from,omitempty"`
	Pool       layout.Pool    `json:"pool"`
	Frames     int            `json:"frames,omitempty"`
	Seconds    float64        `json:"audio_seconds,omitempty"`
}

// TextTokens splits the Qwen sequence.
type TextTokens struct {
	Prompt    int  `json:"prompt"`
	Labels    int  `json:"labels"`
	Vision    int  `json:"vision"`
	Total     int  `json:"total"`
	Estimated bool `json:"prompt_estimated,omitempty"`
	Limit     int  `json:"limit,omitempty"`
}

// Memory is the budget and per-phase peaks.
type Memory struct {
	BudgetBytes int64   `json:"budget_bytes"`
	PeakBytes   int64   `json:"peak_bytes"`
	PeakPhase   string  `json:"peak_phase"`
	Phases      []Phase `json:"phases"`

	// BudgetSource is where BudgetBytes came from (Machine.BudgetSource).
	BudgetSource MemorySource `json:"budget_source"`
}

// Verdicts.
const (
	Fits    = "fits"
	Refused = "refused"
)

// Plan is the planner's answer; it is what `h3studio plan --json` prints.
type Plan struct {
	Task      string `json:"task"`
	Partition string `json:"partition"`
	Model     string `json:"model"`
	Machine   string `json:"machine"`
	// Mac is whether the machine is a Mac (Machine.Mac), so what people
	// read names it rightly ("Fits this Mac", "this machine").
	Mac          bool             `json:"mac"`
	Canvas       layout.Canvas    `json:"canvas"`
	RenderCanvas layout.Canvas    `json:"render_canvas"`
	Frames       int              `json:"frames"`
	Seconds      float64          `json:"seconds"`
	TextTokens   TextTokens       `json:"text_tokens"`
	References   []RefPlan        `json:"references"`
	DiTRows      layout.RowCounts `json:"dit_rows"`
	Memory       Memory           `json:"memory"`
	Residency    Knobs            `json:"residency"`
	Decisions    []Decision       `json:"decisions"`
	Verdict      string           `json:"verdict"`
	Error        string           `json:"error"`
	Repair       *Repair          `json:"repair,omitempty"`
	Time         Estimate         `json:"time"`
	Warnings     []string         `json:"warnings"`
	// LoRAs are the request's adapters with what each costs.
	LoRAs []LoRA `json:"loras,omitempty"`

	// Request is the request as planned, defaults filled in: what
	// Generate runs.
	Request Request `json:"-"`
	// Layout is the exact layout the engine must execute.
	Layout *layout.Layout `json:"-"`
	// Spec is the fitted layout input (with every decision applied).
	Spec layout.Spec `json:"-"`
}

// state is a candidate configuration during fitting.
type state struct {
	req    Request
	spec   layout.Spec
	knobs  Knobs
	output layout.Canvas
}

// eval is a state's layout and costs.
type eval struct {
	l      *layout.Layout
	phases []Phase
	peak   int64
	phase  string
	seq    int
}

// checkPrompt refuses a prompt longer than the text encoder's context. The
// official pipeline passes the prompt to Qwen verbatim and never truncates
// it (SGLang's minimax_h3 presentation and request validation), so the
// context is the only limit; past it Qwen has no positions for the text.
// Reference tokens are left to the fitter, which can pool them.
func checkPrompt(r Request, m Model) error {
	if q := m.Dims.QPositions; q > 0 && r.PromptTokens > q {
		return &layout.LimitError{Msg: fmt.Sprintf("the prompt is %s tokens, over the text encoder's context of %s; shorten the prompt",
			layout.Grouped(r.PromptTokens), layout.Grouped(q))}
	}
	return nil
}

// longPromptWarning says, before anything loads, that the prompt's text
// rows outnumber the clip's own video and audio rows: every DiT forward
// then spends most of its attention on text, which the official pipeline
// allows (it never truncates) but the user rarely means.
func longPromptWarning(promptTokens int, rows layout.RowCounts) string {
	if generated := rows.Video + rows.Audio; promptTokens > generated {
		return fmt.Sprintf("the prompt is %s tokens, more rows than the clip's own %s; it makes every step slower; shorten the prompt unless it is meant",
			layout.Grouped(promptTokens), layout.Grouped(generated))
	}
	return ""
}

func newState(r Request) (state, error) {
	if r.Steps <= 0 {
		r.Steps = DefaultSteps
	}
	if r.Reuse <= 0 {
		r.Reuse = 1
	}
	s := state{req: r, output: r.Canvas, knobs: Knobs{TextEncoder: Resident, DiT: Mapped, VAEDecoder: Resident}}
	// The output is what the user asked for: its rules are checked before
	// any smaller canvas a speed preset derived from it, so the refusal
	// names the canvas the user typed, whatever the preset.
	if err := r.Canvas.ValidateModel(); err != nil {
		return s, err
	}
	model := r.Canvas
	if r.RenderCanvas != (layout.Canvas{}) {
		model = r.RenderCanvas
		if model.Width > r.Canvas.Width || model.Height > r.Canvas.Height ||
			model.Width*r.Canvas.Height != model.Height*r.Canvas.Width {
			return s, fmt.Errorf("plan: render canvas %s must have the output %s's aspect ratio and not exceed it", model, r.Canvas)
		}
	}
	s.spec = layout.Spec{Canvas: model, Frames: r.Frames, PromptTokens: r.PromptTokens,
		First: r.First != "", Last: r.Last != "", Convention: r.Convention, Processor: r.Processor,
		RefShortEdge: r.RefShortEdge}
	for _, ref := range r.Refs {
		lr := ref.Layout()
		lr.Policy, lr.ClipPolicy = r.ImagePolicy, r.ClipPolicy
		s.spec.Refs = append(s.spec.Refs, lr)
	}
	return s, nil
}

// Layout is the reference as the layout rules see it (sizing policies
// left to the request), so a single file can be checked the way its plan
// will check it (layout.CheckRef).
func (ref Reference) Layout() layout.Ref {
	lr := layout.Ref{Kind: ref.Kind, Name: ref.Path, Source: layout.Canvas{Width: ref.Media.Width, Height: ref.Media.Height}}
	switch ref.Kind {
	case layout.RefVideo, layout.RefVideoAudio:
		lr.SourceFrames = ref.Media.framesAt24()
		lr.AudioSeconds = ref.Media.AudioSeconds
	case layout.RefAudio:
		lr.AudioSeconds = ref.Media.DurationS
		lr.AudioRate = ref.Media.AudioRate
		if lr.AudioSeconds == 0 {
			lr.AudioSeconds = ref.Media.AudioSeconds
		}
	}
	return lr
}

func (s state) clone() state {
	c := s
	c.spec.Refs = append([]layout.Ref(nil), s.spec.Refs...)
	return c
}

func (s state) layers(m Model) int {
	if s.req.Layers > 0 && s.req.Layers < m.Dims.Blocks {
		return s.req.Layers
	}
	return m.Dims.Blocks
}

func (s state) estimateInput(m Model) estimateInput {
	in := estimateInput{steps: s.req.Steps, reuse: s.req.Reuse, layers: s.layers(m), output: s.output,
		cachedRefs: s.req.Cached.Refs, cachedText: s.req.Cached.Text, loras: s.req.LoRAs}
	for _, on := range []bool{s.spec.First, s.spec.Last} {
		if on {
			in.anchors++
		}
	}
	return in
}

func (s state) evaluate(m Model, budget int64) (eval, error) {
	l, err := layout.Build(s.spec)
	if err != nil {
		return eval{}, err
	}
	var anchors []layout.Canvas
	for _, a := range []struct {
		on   bool
		size layout.Canvas
	}{{s.spec.First, s.req.FirstSize}, {s.spec.Last, s.req.LastSize}} {
		if a.on {
			if a.size.Width == 0 {
				a.size = l.Canvas
			}
			anchors = append(anchors, a.size)
		}
	}
	ps := phases(phaseInput{l: l, output: s.output, model: m, knobs: s.knobs, steps: s.req.Steps, layers: s.layers(m), anchorSources: anchors, loras: s.req.LoRAs})
	e := eval{l: l, phases: ps, seq: l.Qwen.Tokens()}
	e.peak, e.phase = peakOf(ps)
	return e, nil
}

// Make plans a request for a machine and model, fitting it when needed.
// A request that breaks the model's rules is an error; one that cannot be
// fitted is a plan with verdict "refused" and a Repair.
func Make(r Request, mc Machine, m Model, opt Options) (*Plan, error) {
	if err := checkPrompt(r, m); err != nil {
		return nil, err
	}
	s, err := newState(r)
	if err != nil {
		return nil, err
	}
	budget := mc.Budget()
	e, err := s.evaluate(m, budget)
	if err != nil {
		return nil, err
	}
	f := fitter{m: m, budget: budget, limit: opt.MaxSequence, s: s, e: e}
	if !opt.NoFit {
		f.run()
	}
	p := f.report(mc)
	p.Request = s.req
	if !f.fits() {
		p.Verdict = Refused
		p.Error = f.violation()
		if !opt.NoFit {
			p.Repair = findRepair(r, mc, m, opt)
			if p.Repair != nil {
				p.Error += "; " + p.Repair.Text
			}
		}
	}
	return p, nil
}

// IsLimit reports whether err is a rule of the model (not memory).
func IsLimit(err error) bool {
	var le *layout.LimitError
	return errors.As(err, &le)
}

// LegacyQwenLimit is the Qwen sequence limit of a kernel that keeps one
// f32 score per key in threadgroup memory beside 1 KiB of statics (h3.c's
// causal GQA): 7936 tokens on Apple's 32 KiB.
func LegacyQwenLimit(threadgroupBytes int) int { return (threadgroupBytes - 1024) / 4 }
