package lora

import (
	"fmt"
	"path/filepath"
	"strings"

	"h3studio/engine/weights"
)

// QKVChoice is how Match reads an adapter's fused qkv_proj rows.
type QKVChoice string

// The choices of Options.QKV (the CLI's --lora-qkv).
const (
	QKVAuto        QKVChoice = "auto"
	QKVFlat        QKVChoice = "flat"
	QKVInterleaved QKVChoice = "interleaved"
)

// ParseQKVChoice reads auto, flat or interleaved ("" is auto).
func ParseQKVChoice(s string) (QKVChoice, error) {
	switch c := QKVChoice(s); c {
	case "", QKVAuto:
		return QKVAuto, nil
	case QKVFlat, QKVInterleaved:
		return c, nil
	}
	return "", fmt.Errorf("lora: qkv layout %q is not auto, flat or interleaved", s)
}

// qkvMetadataKey is a file's explicit statement of its qkv row layout.
const qkvMetadataKey = "h3studio.qkv_layout"

// decideQKV sets the layout of the adapter's fused qkv rows and tells its
// updates the base's.
//
// The decision for a fused qkv update with no statement in the file
// (evidence: diffusers @58eb52c scripts/convert_minimax_h3_to_diffusers.py
// and loaders/lora_conversion_utils.py, vpipe docs/MINIMAX-H3.md): every trainer but one loads the MiniMaxAI shards through
// code that reorders qkv rows flat ([q | k | v]: the MiniMaxAI remote
// code, diffusers' converter, SGLang, vllm-omni) or trains on the flat
// Comfy-Org repack (ComfyUI), so their B rows are flat: larryvrh's Turbo,
// lightx2v's "_comfyui" files, ai-toolkit, musubi. DiffSynth-Studio runs
// the raw interleaved shards verbatim; its files are the ones whose PEFT
// names keep the ".default." adapter infix, which diffusers' own LoRA
// converter uses to tell them apart (it de-interleaves only those). A
// diffusers split adapter has no ambiguity: its parts are fused here in
// flat order.
func (a *Adapter) decideQKV(o Options, t Target) error {
	cov := &a.Coverage
	hasQKV := false
	for _, u := range a.Updates {
		hasQKV = hasQKV || u.Kind == KindQKV
	}
	if !hasQKV {
		return nil
	}
	choice, err := ParseQKVChoice(string(o.QKV))
	if err != nil {
		return err
	}
	stated := weights.QKVLayout(a.file.Metadata[qkvMetadataKey])
	switch {
	case choice != QKVAuto:
		cov.QKV, cov.QKVReason = weights.QKVLayout(choice), "set by the request (--lora-qkv)"
	case stated == weights.QKVFlat || stated == weights.QKVInterleaved:
		cov.QKV, cov.QKVReason = stated, "stated in the file's metadata ("+qkvMetadataKey+")"
	case a.file.Layout == Diffusers:
		cov.QKV, cov.QKVReason = weights.QKVFlat, "split to_q/to_k/to_v, fused in flat order"
	case a.file.Metadata["key_format"] == "minimax-h3-native":
		cov.QKV, cov.QKVReason = weights.QKVInterleaved, "key_format minimax-h3-native (FlashGen): rows grouped per head, as vllm-omni reads them"
	case a.file.peftDefault:
		cov.QKV, cov.QKVReason = weights.QKVInterleaved, "PEFT names with the .default. infix: DiffSynth-Studio, which trains on the raw interleaved shards"
	default:
		cov.QKV, cov.QKVReason = weights.QKVFlat, "fused qkv with no statement: trainers load the release with its rows reordered flat"
	}
	for _, u := range a.Updates {
		if u.Kind != KindQKV {
			continue
		}
		u.qkvFrom = cov.QKV
		if u.split() {
			u.qkvFrom = weights.QKVFlat // Load stacks the parts as [q | k | v]
		}
		if u.Out != 3*t.Heads*t.HeadDim {
			return &Misfit{Path: a.Path, Kind: Shape, Detail: fmt.Sprintf("%s has %d rows, not 3 x %d heads x %d", u.Module, u.Out, t.Heads, t.HeadDim)}
		}
	}
	return nil
}

// permuteQKV reorders the rows of a qkv B [3·heads·hd, rank] from one
// layout to the other: flat row p·inner + h·hd + d is interleaved row
// h·3·hd + p·hd + d.
func permuteQKV(b []float32, rank, heads, hd int, from, to weights.QKVLayout) []float32 {
	out := make([]float32, len(b))
	inner := heads * hd
	for p := 0; p < 3; p++ {
		for h := 0; h < heads; h++ {
			for d := 0; d < hd; d++ {
				flat := p*inner + h*hd + d
				inter := h*3*hd + p*hd + d
				src, dst := flat, inter
				if from == weights.QKVInterleaved {
					src, dst = inter, flat
				}
				copy(out[dst*rank:(dst+1)*rank], b[src*rank:(src+1)*rank])
			}
		}
	}
	return out
}

// partitionFromName reads lightx2v's partition token from a file name
// ("minimax_h3_fl2v_turbo_..." or "minimax_h3_ref2v_turbo_...").
func partitionFromName(path string) string {
	n := strings.ToLower(filepath.Base(path))
	switch {
	case strings.Contains(n, "ref2v"):
		return "ref2va"
	case strings.Contains(n, "fl2v"):
		return "fl2va"
	}
	return ""
}
