package engine

import (
	"errors"
	"math"
	"strings"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/layout"
	"h3studio/engine/plan"
	"h3studio/engine/weights"
)

// PlanFor plans a request for a weights profile alone, with no snapshot on
// disk (`h3studio plan --model official-q4_k`): the release's processor
// budget, the prompt estimated (there is no tokenizer to count it with) and
// no partition to check. It is a function, not an Engine opened without
// weights, so that nothing can Generate from such a plan: an Engine always
// has a snapshot, a tokenizer and a backend.
func PlanFor(m plan.Model, r plan.Request, mc plan.Machine, opt plan.Options) (*plan.Plan, error) {
	if err := checkKnobs(r); err != nil {
		return nil, err
	}
	r.PromptTokens, r.PromptEstimated = estimateTokens(r.Prompt), r.Prompt != ""
	if len(r.LoRAs) > 0 { // a profile is the release's DiT, in the official (interleaved) layout
		cfg, err := arch.ReleaseDiT()
		if err != nil {
			return nil, err
		}
		b := loraBase{cfg: cfg, qkv: weights.QKVInterleaved, part: taskPartition(r)}
		if err := b.planLoRAs(&r, ggml.Precision{}); err != nil {
			return nil, err
		}
	}
	return plan.Make(r, mc, m, opt)
}

// taskPartition is the partition the request's task runs on.
func taskPartition(r plan.Request) string {
	spec := layout.Spec{First: r.First != "", Last: r.Last != ""}
	for _, ref := range r.Refs {
		spec.Refs = append(spec.Refs, layout.Ref{Kind: ref.Kind})
	}
	return spec.Task().Partition()
}

// checkKnobs refuses sampler settings no generation can run.
func checkKnobs(r plan.Request) error {
	var errs []error
	if r.Steps < 0 || r.Layers < 0 || r.Reuse < 0 || r.CoreReuse < 0 {
		errs = append(errs, errors.New("engine: steps, layers and reuse must not be negative"))
	}
	if r.Reuse > 1 && r.CoreReuse > 1 {
		errs = append(errs, errors.New("engine: velocity reuse and core reuse cannot be combined"))
	}
	if r.VideoShift < 0 || r.AudioShift < 0 {
		errs = append(errs, errors.New("engine: sigma shifts must not be negative"))
	}
	return errors.Join(errs...)
}

// estimateTokens approximates Qwen's byte-level BPE on prose: about one
// token per 4 bytes of words, one per punctuation mark, one per digit.
func estimateTokens(s string) int {
	if s == "" {
		return 0
	}
	n := 0.0
	for _, w := range strings.Fields(s) {
		letters := 0
		for _, c := range w {
			switch {
			case c >= '0' && c <= '9':
				n++
			case c < 128 && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
				n++
			default:
				letters++
			}
		}
		n += math.Ceil(float64(letters) / 4)
	}
	return max(1, int(n))
}
