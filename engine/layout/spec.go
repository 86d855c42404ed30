package layout

import (
	"fmt"
	"math"
)

// Task is the generation mode, which also selects the DiT partition.
type Task int

const (
	// T2VA is text to video+audio (FL2VA partition, no anchors).
	T2VA Task = iota
	// FL2VA conditions on a first and/or last frame (FL2VA partition).
	FL2VA
	// Ref2VA conditions on ordered references (Ref2VA partition).
	Ref2VA
)

var taskNames = [...]string{"t2va", "fl2va", "ref2va"}

func (t Task) String() string {
	if int(t) < len(taskNames) {
		return taskNames[t]
	}
	return fmt.Sprintf("Task(%d)", int(t))
}

// Partition is the checkpoint partition that serves the task.
func (t Task) Partition() string {
	if t == Ref2VA {
		return "ref2va"
	}
	return "fl2va"
}

// RefKind is a reference's media kind.
type RefKind int

const (
	RefImage      RefKind = iota // a still image
	RefVideo                     // a clip used without sound
	RefVideoAudio                // a clip with its soundtrack (embedded or replacement)
	RefAudio                     // a standalone audio clip
)

var refKindNames = [...]string{"image", "video", "video+audio", "audio"}

func (k RefKind) String() string {
	if int(k) < len(refKindNames) {
		return refKindNames[k]
	}
	return fmt.Sprintf("RefKind(%d)", int(k))
}

// ParseRefKind reads "image", "video", "video+audio" or "audio".
func ParseRefKind(s string) (RefKind, error) {
	for i, n := range refKindNames {
		if s == n {
			return RefKind(i), nil
		}
	}
	return 0, fmt.Errorf("layout: unknown reference kind %q", s)
}

// HasVideo reports whether the reference carries pictures over time.
func (k RefKind) HasVideo() bool { return k == RefVideo || k == RefVideoAudio }

// HasAudio reports whether the reference counts as an audio input.
func (k RefKind) HasAudio() bool { return k == RefAudio || k == RefVideoAudio }

// Pool is a reduction of a reference clip's Qwen vision tokens. It is not
// in the release (deviation: the encoder averages vision-tower outputs),
// and only shortens the Qwen sequence; DiT rows are unchanged. A zero
// factor means 1.
type Pool struct {
	Temporal int `json:"temporal"` // 2: each block averages two 2-fps blocks
	Spatial  int `json:"spatial"`  // 2: each token averages a 2x2 cell
}

func (p Pool) norm() Pool {
	return Pool{max(1, p.Temporal), max(1, p.Spatial)}
}

// IsZero reports whether no pooling applies.
func (p Pool) IsZero() bool { n := p.norm(); return n.Temporal == 1 && n.Spatial == 1 }

// Ref is one ordered reference as the request gives it, plus the planner's
// levers. Source sizes come from a media probe (display orientation).
type Ref struct {
	Kind         RefKind
	Name         string  // shown in messages (usually the file's base name)
	Source       Canvas  // image or clip pixel size
	SourceFrames int     // clip length in frames at 24 fps
	AudioSeconds float64 // audio clip or soundtrack length
	AudioRate    int     // an audio clip's sample rate (0: 32 kHz)

	Policy       ImagePolicy // images
	ClipPolicy   ClipPolicy  // clips
	CapShortEdge int         // the planner's extra down-scale of the short edge (0 = none)
	Pool         Pool        // clips: Qwen token pooling
	MaxFrames    int         // clips: decode at most this many frames (0 = no cap beyond the output)
}

// Spec is everything the layout depends on.
type Spec struct {
	Canvas       Canvas // the model canvas (the render canvas when rendering smaller)
	Frames       int    // requested frames; aligned to 17n+5 by Build
	PromptTokens int    // raw prompt tokens (0 = empty prompt)
	First, Last  bool   // FL2VA anchors
	Refs         []Ref  // Ref2VA references in request order
	Convention   VideoConvention
	// Processor is the snapshot's Qwen processor budget (zero: the release's).
	Processor QwenProcessor
	// RefShortEdge is the largest reference short edge the model declares
	// (its h3studio.json; 0: the release's sizing, made for 768-class
	// canvases, which a small model would spend minutes encoding).
	RefShortEdge int
}

// Task derives the task from the anchors and references.
func (s *Spec) Task() Task {
	switch {
	case len(s.Refs) > 0:
		return Ref2VA
	case s.First || s.Last:
		return FL2VA
	}
	return T2VA
}

// Reference limits of the release.
const (
	MaxRefs       = 12
	MaxRefImages  = 9
	MaxRefVideos  = 3
	MaxRefAudio   = 3
	minSoundFrame = 48 // a soundtrack must cover 2 s of decoded frames
)

// RefLayout is a reference resolved against the request.
type RefLayout struct {
	Ref
	Label        int     // 1-based number in its label kind (<Picture n>, <Video n>, <Audio n>)
	AudioLabel   int     // video+audio: its <Audio j> number
	Canvas       Canvas  // the decode canvas: what the VAE encodes
	QwenCanvas   Canvas  // what the vision tower sees (the Qwen processor's resize of Canvas)
	Frames       int     // decoded clip frames F' (all sampled for Qwen)
	VAEFrames    int     // the first frames of F' the video VAE encodes
	LatentFrames int     // DiT latent frames (1 for an image)
	UsedSeconds  float64 // audio actually used (soundtrack cut, 15 s total cap)
	AudioSamples int     // 32 kHz samples of the used audio (AudioSamplesFrom)
	AudioLatents int     // Ta of the used audio
	DiTRows      int
	QwenTokens   int // this reference's share of the Qwen sequence, labels included
	QwenBlocks   int // 2-fps blocks after temporal pooling
}

// LimitError is a request that breaks a rule of the model (not of memory).
type LimitError struct {
	Msg string
	// Ref is the 1-based place in the request of the reference the rule
	// is about (0: the request as a whole), and Rule the message without
	// the reference's name, so app can name it as the window lists it.
	Ref  int
	Rule string
}

func (e *LimitError) Error() string { return "layout: " + e.Msg }

func limitf(format string, a ...any) error { return &LimitError{Msg: fmt.Sprintf(format, a...)} }

// refLimit is a broken rule about reference i, named as the engine names
// it and kept apart for callers that name it their own way.
func refLimit(i int, r Ref, rule string) error {
	return &LimitError{Msg: refName(i, r) + ": " + rule, Ref: i + 1, Rule: rule}
}

func refName(i int, r Ref) string {
	if r.Name != "" {
		return fmt.Sprintf("reference %d (%s)", i+1, r.Name)
	}
	return fmt.Sprintf("reference %d", i+1)
}

// CheckRef checks the rules one reference must meet on its own, whatever
// the rest of the request: the window checks a file with it when it is
// added, and validate checks every reference with it. The message does not
// name the reference.
func CheckRef(r Ref) error {
	switch r.Kind {
	case RefImage:
		if r.Source.Width < 1 || r.Source.Height < 1 {
			return limitf("image has no size")
		}
		if !aspectOK(r.Source) {
			return limitf("image %s is more elongated than 4:1; crop it", r.Source)
		}
	case RefVideo, RefVideoAudio:
		if r.Source.Width < 1 || r.Source.Height < 1 || r.SourceFrames < 1 {
			return limitf("clip has no frames")
		}
	case RefAudio:
		if r.AudioSeconds < MinAudioSeconds {
			return limitf("audio is %.1f s; audio references need at least %.0f s", r.AudioSeconds, MinAudioSeconds)
		}
	default:
		return limitf("unknown kind %v", r.Kind)
	}
	return nil
}

// validate checks the release's request rules.
func (s *Spec) validate() error {
	if err := s.Canvas.ValidateModel(); err != nil {
		return err
	}
	f := AlignFrames(s.Frames)
	if f < MinFrames || f > MaxFrames {
		return limitf("%d frames is outside %d..%d (0.9 to 15 s at 24 fps)", s.Frames, MinFrames, MaxFrames)
	}
	if s.PromptTokens < 0 {
		return limitf("negative prompt token count %d", s.PromptTokens)
	}
	if len(s.Refs) == 0 {
		return nil
	}
	if s.First || s.Last {
		return limitf("first/last frame anchors and references cannot be mixed; use one or the other")
	}
	var images, videos, audios, visual int
	for i, r := range s.Refs {
		if err := CheckRef(r); err != nil {
			return refLimit(i, r, err.(*LimitError).Msg)
		}
		switch r.Kind {
		case RefImage:
			images++
			visual++
		case RefVideo, RefVideoAudio:
			videos++
			visual++
		}
		if r.Kind.HasAudio() {
			audios++
		}
	}
	switch {
	case len(s.Refs) > MaxRefs:
		return limitf("%d references; at most %d are allowed", len(s.Refs), MaxRefs)
	case images > MaxRefImages:
		return limitf("%d reference images; at most %d are allowed", images, MaxRefImages)
	case videos > MaxRefVideos:
		return limitf("%d reference clips; at most %d are allowed", videos, MaxRefVideos)
	case audios > MaxRefAudio:
		return limitf("%d audio inputs (clips with sound count too); at most %d are allowed", audios, MaxRefAudio)
	case visual == 0:
		return limitf("audio references need at least one image or clip reference beside them")
	}
	return nil
}

// resolveRefs computes canvases, lengths, audio and DiT rows per reference.
func (s *Spec) resolveRefs(frames int) ([]RefLayout, error) {
	out := make([]RefLayout, len(s.Refs))
	audioLeft := MaxAudioSeconds // 480,000 samples in total, as the release caps
	var nPic, nVid, nAud int
	for i, r := range s.Refs {
		rl := RefLayout{Ref: r}
		rl.Pool = r.Pool.norm()
		switch r.Kind {
		case RefImage:
			nPic++
			rl.Label = nPic
			rl.Canvas = RefCanvas(r, s.Canvas, s.RefShortEdge)
			rl.LatentFrames = 1
			rl.DiTRows = rl.Canvas.Tokens()
		case RefVideo, RefVideoAudio:
			if r.Kind == RefVideoAudio {
				nAud++
				rl.AudioLabel = nAud
			}
			nVid++
			rl.Label = nVid
			rl.Canvas = RefCanvas(r, s.Canvas, s.RefShortEdge)
			rl.Frames = min(r.SourceFrames, frames)
			if r.MaxFrames > 0 {
				rl.Frames = min(rl.Frames, r.MaxFrames)
			}
			rl.VAEFrames = RefVideoVAEFrames(rl.Frames, s.Convention)
			rl.LatentFrames = RefVideoLatentFrames(rl.Frames, s.Convention)
			rl.DiTRows = rl.LatentFrames * rl.Canvas.Tokens()
			if r.Kind == RefVideoAudio {
				// The official path extracts a soundtrack for the output's
				// length (audio_encoding.py: frame_count / fps), as for any
				// audio input.
				rl.UsedSeconds = math.Min(r.AudioSeconds, float64(frames)/FPS)
				if rl.Frames < minSoundFrame || rl.UsedSeconds < MinAudioSeconds {
					return nil, refLimit(i, r, fmt.Sprintf("its soundtrack covers %.1f s of the %d decoded frames; a soundtrack needs 2 s (use at least 56 output frames, or drop the sound)", rl.UsedSeconds, rl.Frames))
				}
			}
		case RefAudio:
			nAud++
			rl.Label = nAud
			rl.UsedSeconds = math.Min(r.AudioSeconds, float64(frames)/FPS)
		}
		if r.Kind.HasAudio() {
			if rl.UsedSeconds > audioLeft {
				rl.UsedSeconds = audioLeft
				if rl.UsedSeconds < MinAudioSeconds {
					return nil, refLimit(i, r, fmt.Sprintf("audio inputs total more than %.0f s; shorten or drop one", MaxAudioSeconds))
				}
			}
			audioLeft -= rl.UsedSeconds
			rate := r.AudioRate
			if r.Kind == RefVideoAudio {
				rate = SoundtrackRate
			}
			rl.AudioSamples = AudioSamplesFrom(rl.UsedSeconds, rate)
			rl.AudioLatents = AudioLatentsForSamples(rl.AudioSamples)
			rl.DiTRows += 2 * rl.AudioLatents
		}
		out[i] = rl
	}
	return out, nil
}
