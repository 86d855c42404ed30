package layout

import (
	"fmt"
	"strconv"
)

// SpanKind is one piece of the Qwen3-VL presentation.
type SpanKind int

const (
	SpanLabel  SpanKind = iota // plain text: "<Picture 1>: ", "<0.2 seconds>", ...
	SpanImage                  // a vision block of <|image_pad|> tokens
	SpanVideo                  // a vision block of <|video_pad|> tokens (one 2-fps block)
	SpanPrompt                 // the raw prompt
)

var spanNames = [...]string{"label", "image", "video", "prompt"}

func (k SpanKind) String() string {
	if int(k) < len(spanNames) {
		return spanNames[k]
	}
	return fmt.Sprintf("SpanKind(%d)", int(k))
}

// IsVision reports whether the span is a vision block.
func (k SpanKind) IsVision() bool { return k == SpanImage || k == SpanVideo }

// Qwen3 special token ids used by the presentation.
const (
	TokenPad         = 151643 // <|endoftext|>: an empty T2VA prompt
	TokenVisionStart = 151652
	TokenVisionEnd   = 151653
	TokenImagePad    = 151655
	TokenVideoPad    = 151656
)

// Span is one element of the presentation. There is no chat template and no
// system prompt: the sequence is exactly these spans in order.
type Span struct {
	Kind SpanKind
	// Text is a label's exact text (the tokenizer realises it); empty for
	// vision blocks and the prompt.
	Text string
	// Tokens is the span's length. Labels are counted with LabelTokens
	// (exact for the release's labels with the Qwen3 vocabulary); a vision
	// block is GridH*GridW pad tokens plus its two delimiters.
	Tokens int
	// Ref is the reference index (Ref2VA) or anchor index (FL2VA: 0 first,
	// 1 last); -1 for the prompt.
	Ref int
	// Block is a clip's block index (after temporal pooling).
	Block int
	// Canvas is the pixel canvas the vision tower sees (the Qwen processor's
	// resize of Source); GridH x GridW is the merged token grid fed to the
	// language model (after spatial pooling).
	Canvas Canvas
	// Source is the canvas the input was decoded on (the VAE's).
	Source       Canvas
	GridH, GridW int
	// Frames are the clip frames (24 fps indices) averaged into this block:
	// two per 2-fps block, four when temporally pooled.
	Frames []int
	Pool   Pool
}

// Presentation is the ordered Qwen input.
type Presentation struct {
	Spans []Span
}

// Tokens is the full sequence length L_txt (= DiT text rows).
func (p *Presentation) Tokens() int { return p.count(func(Span) bool { return true }) }

// VisionTokens counts vision blocks, delimiters included.
func (p *Presentation) VisionTokens() int {
	return p.count(func(s Span) bool { return s.Kind.IsVision() })
}

// LabelTokens counts label text.
func (p *Presentation) LabelTokens() int {
	return p.count(func(s Span) bool { return s.Kind == SpanLabel })
}

// PromptTokens counts the prompt (1 for an empty T2VA prompt's pad token).
func (p *Presentation) PromptTokens() int {
	return p.count(func(s Span) bool { return s.Kind == SpanPrompt })
}

func (p *Presentation) count(keep func(Span) bool) int {
	n := 0
	for _, s := range p.Spans {
		if keep(s) {
			n += s.Tokens
		}
	}
	return n
}

// digits is the token count of a decimal number: Qwen's pre-tokenizer
// splits digits one by one.
func digits(n int) int { return len(strconv.Itoa(n)) }

// LabelTokens is the token count of a release label with the Qwen3
// vocabulary: "<Picture n>: " and "<Video n>: " are 5 + digits(n),
// "<Audio n>: " is 4 + digits(n), "<b.d seconds>" is 5 + digits(b)
// (measured with the release tokenizer.json; see the project's H3 facts).
func LabelTokens(text string) int {
	var n, frac int
	var word string
	if k, _ := fmt.Sscanf(text, "<%s %d>: ", &word, &n); k == 2 {
		if word == "Audio" {
			return 4 + digits(n)
		}
		return 5 + digits(n)
	}
	if k, _ := fmt.Sscanf(text, "<%d.%d seconds>", &n, &frac); k == 2 {
		return 5 + digits(n)
	}
	// Not a release label: a conservative byte-level bound.
	return len(text)
}

func label(text string, ref int) Span {
	return Span{Kind: SpanLabel, Text: text, Tokens: LabelTokens(text), Ref: ref}
}

// visionBlock is one block of the vision tower over canvas c, which the
// input was decoded on as src.
func visionBlock(kind SpanKind, ref, block int, src, c Canvas, pool Pool, frames []int) Span {
	gh, gw := c.Height/CanvasMultiple, c.Width/CanvasMultiple
	if pool.Spatial > 1 {
		gh, gw = (gh+pool.Spatial-1)/pool.Spatial, (gw+pool.Spatial-1)/pool.Spatial
	}
	return Span{Kind: kind, Tokens: gh*gw + 2, Ref: ref, Block: block, Canvas: c, Source: src, GridH: gh, GridW: gw, Frames: frames, Pool: pool}
}

// videoBlocks groups a clip's 2-fps samples into blocks of 2 (or 2*Temporal)
// frames and labels each with the mean time of its frames, printed %.1f:
// "<0.2 seconds>", "<1.2 seconds>", ...; an odd last block reads "<b.0 seconds>".
func videoBlocks(ref int, rl *RefLayout, proc QwenProcessor) []Span {
	samples := QwenSamples(rl.Frames)
	// The processor sees the unpadded samples: every 12th frame.
	qc := proc.VideoCanvas(rl.Canvas, (rl.Frames+qwenSampleStride-1)/qwenSampleStride)
	per := 2 * rl.Pool.Temporal
	var out []Span
	for b := 0; b*per < len(samples); b++ {
		fr := samples[b*per : min(len(samples), (b+1)*per)]
		sum := 0.0
		for _, f := range fr {
			sum += float64(f) / FPS
		}
		ts := fmt.Sprintf("<%.1f seconds>", sum/float64(len(fr)))
		out = append(out, label(ts, ref), visionBlock(SpanVideo, ref, b, rl.Canvas, qc, rl.Pool, fr))
	}
	return out
}

// buildPresentation lays out the Qwen input for a request.
func buildPresentation(s *Spec, canvas Canvas, refs []RefLayout) Presentation {
	var p Presentation
	pic := 0
	anchor := func(idx int) {
		pic++
		p.Spans = append(p.Spans, label(fmt.Sprintf("<Picture %d>: ", pic), idx),
			visionBlock(SpanImage, idx, 0, canvas, s.Processor.ImageCanvas(canvas), Pool{1, 1}, nil))
	}
	if s.First {
		anchor(0)
	}
	if s.Last {
		anchor(1)
	}
	for i := range refs {
		rl := &refs[i]
		start := len(p.Spans)
		switch rl.Kind {
		case RefImage:
			rl.QwenCanvas = s.Processor.ImageCanvas(rl.Canvas)
			p.Spans = append(p.Spans, label(fmt.Sprintf("<Picture %d>: ", rl.Label), i),
				visionBlock(SpanImage, i, 0, rl.Canvas, rl.QwenCanvas, Pool{1, 1}, nil))
		case RefAudio:
			p.Spans = append(p.Spans, label(fmt.Sprintf("<Audio %d>: ", rl.Label), i))
		case RefVideo, RefVideoAudio:
			if rl.Kind == RefVideoAudio {
				p.Spans = append(p.Spans, label(fmt.Sprintf("<Audio %d>: ", rl.AudioLabel), i))
			}
			p.Spans = append(p.Spans, label(fmt.Sprintf("<Video %d>: ", rl.Label), i))
			blocks := videoBlocks(i, rl, s.Processor)
			rl.QwenCanvas = blocks[1].Canvas
			rl.QwenBlocks = len(blocks) / 2
			p.Spans = append(p.Spans, blocks...)
		}
		for _, sp := range p.Spans[start:] {
			rl.QwenTokens += sp.Tokens
		}
	}
	prompt := s.PromptTokens
	if prompt == 0 && len(p.Spans) == 0 {
		prompt = 1 // an empty T2VA prompt is the single pad token
	}
	if prompt > 0 {
		p.Spans = append(p.Spans, Span{Kind: SpanPrompt, Tokens: prompt, Ref: -1})
	}
	return p
}

// Positions returns the Qwen3-VL mRoPE position (t, h, w) of every token.
// Text advances all three axes together. A vision block's pad tokens
// starting at index s with offset o sit at (s+o, s+o+row, s+o+col); the
// token after the block continues from s+o+max(GridH, GridW), so the offset
// grows by max(GridH, GridW) minus the pad count. Video blocks are placed
// like images (time lives in the timestamp labels).
func (p *Presentation) Positions() [][3]int {
	out := make([][3]int, 0, p.Tokens())
	next := 0 // position of the next text token
	for _, sp := range p.Spans {
		if !sp.Kind.IsVision() {
			for i := 0; i < sp.Tokens; i++ {
				out = append(out, [3]int{next, next, next})
				next++
			}
			continue
		}
		out = append(out, [3]int{next, next, next}) // <|vision_start|>
		base := next + 1
		for r := 0; r < sp.GridH; r++ {
			for c := 0; c < sp.GridW; c++ {
				out = append(out, [3]int{base, base + r, base + c})
			}
		}
		next = base + max(sp.GridH, sp.GridW)
		out = append(out, [3]int{next, next, next}) // <|vision_end|>
		next++
	}
	return out
}

// Modalities returns each token's DiT AdaLN modality: a whole vision block,
// delimiters included, is video; everything else is text.
func (p *Presentation) Modalities() []Modality {
	out := make([]Modality, 0, p.Tokens())
	for _, sp := range p.Spans {
		m := ModalityText
		if sp.Kind.IsVision() {
			m = ModalityVideo
		}
		for i := 0; i < sp.Tokens; i++ {
			out = append(out, m)
		}
	}
	return out
}
