package lora

import (
	"fmt"
	"strings"
)

// MisfitKind is why an adapter cannot be applied to a model.
type MisfitKind string

// The refusals Match makes before any weight is read; app turns each into
// one sentence (app/advice.go).
const (
	// NotLoRA: the file holds no LoRA pairs, or pairs with a half missing.
	NotLoRA MisfitKind = "not a LoRA"
	// Shape: a pair's shapes do not fit the module it names (another
	// model's adapter, or another size of this one).
	Shape MisfitKind = "shape"
	// Unmatched: pairs for modules this DiT does not have.
	Unmatched MisfitKind = "unmatched"
	// Unsupported: pairs for linears of this DiT that take no side path
	// (patch projections, condition projection, time embedder, heads).
	Unsupported MisfitKind = "unsupported module"
	// ExtraTensors: tensors that are no LoRA pair, such as the per-interval
	// output heads of alibaba-pai's PDD adapters; applying the pairs
	// without them would be half the adapter.
	ExtraTensors MisfitKind = "extra tensors"
	// Partition: the adapter is for the other partition (FL2VA vs Ref2VA).
	Partition MisfitKind = "partition"
)

// Misfit is a refusal: the adapter at Path does not fit the model.
type Misfit struct {
	Path   string
	Kind   MisfitKind
	Detail string
	// Keys are the tensors concerned (the first few in Error).
	Keys []string
}

// maxKeysShown bounds the keys an error message lists.
const maxKeysShown = 4

func (e *Misfit) Error() string {
	msg := fmt.Sprintf("lora: %s: %s", e.Path, e.Kind)
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	if n := len(e.Keys); n > 0 {
		shown := e.Keys[:min(n, maxKeysShown)]
		msg += " (" + strings.Join(shown, ", ")
		if n > len(shown) {
			msg += fmt.Sprintf(" and %d more", n-len(shown))
		}
		msg += ")"
	}
	return msg
}
