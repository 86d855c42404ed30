package lora

import (
	"fmt"
	"sort"
	"strings"

	"h3studio/engine/weights"
)

// Options configure Match.
type Options struct {
	// QKV is the row layout the adapter's fused qkv_proj updates were made
	// for: QKVAuto (the zero value) decides from the file (qkv.go),
	// QKVFlat or QKVInterleaved overrides that decision.
	QKV QKVChoice
}

// Adapter is a LoRA file matched to a base model: one Update per module
// it changes. It is strength-free; engine/dit applies it with one.
type Adapter struct {
	Path     string
	Updates  []*Update // by module name
	Coverage Coverage
	file     *File
}

// Close releases the file.
func (a *Adapter) Close() error { return a.file.Close() }

// Coverage reports what an adapter changes in a model.
type Coverage struct {
	Layout Layout `json:"layout"`
	// Modules and Targets count matched modules and the model's modules
	// per kind.
	Modules map[Kind]int `json:"modules"`
	Targets map[Kind]int `json:"targets"`
	Rank    int          `json:"rank"` // the largest (a fused split qkv counts its three parts)
	// Unmatched are the file's pairs for modules the model lacks,
	// Unsupported those for linears that take no side path; Extra its
	// tensors that belong to no pair (all three are refusals).
	Unmatched   []string `json:"unmatched,omitempty"`
	Unsupported []string `json:"unsupported,omitempty"`
	Extra       []string `json:"extra,omitempty"`
	// Ignored are tensors read but not applied: .alpha scalars of no pair.
	Ignored []string `json:"ignored,omitempty"`
	// QKV is the layout the adapter's qkv rows are read in, and why.
	QKV       weights.QKVLayout `json:"qkv_layout,omitempty"`
	QKVReason string            `json:"qkv_reason,omitempty"`
	// Partition is the partition the file says it is for ("" unknown).
	Partition string `json:"partition,omitempty"`
	// AlphaSource says where the updates' alpha came from; Scale is each
	// kind's alpha/rank (of its first module; strength not included).
	AlphaSource string           `json:"alpha_source"`
	Scale       map[Kind]float64 `json:"scale"`
	// Bytes is the updates' A and B as stored in the file.
	Bytes int64 `json:"bytes"`
}

// Matched is the number of modules the adapter updates.
func (c Coverage) Matched() int {
	n := 0
	for _, v := range c.Modules {
		n += v
	}
	return n
}

// Match checks f against t and returns the adapter, or a *Misfit when any
// part of the file does not fit: an adapter applies whole or not at all.
func Match(f *File, t Target, o Options) (*Adapter, error) {
	a, err := Inspect(f, t, o)
	if err != nil {
		return nil, err
	}
	return a, nil
}

// Inspect is Match that also returns the adapter (for its Coverage) when
// the file does not fit; an adapter returned with an error must not be
// applied.
func Inspect(f *File, t Target, o Options) (*Adapter, error) {
	a := &Adapter{Path: f.Path, file: f, Coverage: Coverage{Layout: f.Layout, Modules: map[Kind]int{}, Targets: map[Kind]int{}, Scale: map[Kind]float64{}}}
	cov := &a.Coverage
	alpha, err := alphaOf(f)
	if err != nil {
		return a, err
	}
	cov.AlphaSource = alpha.source
	for _, m := range t.Modules {
		cov.Targets[m.Kind]++
	}
	cov.Partition = partitionOf(f)
	cov.Extra = append(cov.Extra, f.other...)
	byModule := map[string]*Update{}
	var misfits []*Misfit
	for _, key := range f.keys() {
		p := f.pairs[key]
		if p.a == nil && p.b == nil {
			cov.Ignored = append(cov.Ignored, p.alpha.Name)
			continue
		}
		ref, ok := f.resolve(key, t)
		switch {
		case !ok && f.unsupported(key, t):
			cov.Unsupported = append(cov.Unsupported, pairName(p))
			continue
		case !ok:
			cov.Unmatched = append(cov.Unmatched, pairName(p))
			continue
		}
		u := byModule[ref.module]
		if u == nil {
			m := t.Modules[ref.module]
			u = &Update{Module: m.Name, Kind: m.Kind, In: m.In, Out: m.Out, f: f}
			byModule[ref.module] = u
		}
		if mf := u.addPart(p, ref, t, alpha); mf != nil {
			mf.Path = f.Path
			misfits = append(misfits, mf)
		}
	}
	for _, name := range sortedModules(byModule) {
		u := byModule[name]
		a.Updates = append(a.Updates, u)
		if cov.Modules[u.Kind] == 0 {
			cov.Scale[u.Kind] = u.Scale
		}
		cov.Modules[u.Kind]++
		cov.Rank = max(cov.Rank, u.Rank)
		for _, pt := range u.parts {
			cov.Bytes += pt.a.Bytes + pt.b.Bytes
		}
	}
	if err := a.decideQKV(o, t); err != nil {
		return a, err
	}
	return a, a.refusal(misfits, t)
}

// refusal picks the error to report: a file that is no LoRA first, then
// the partition, the extra tensors, unmatched pairs and shapes.
func (a *Adapter) refusal(misfits []*Misfit, t Target) error {
	cov := &a.Coverage
	for _, m := range misfits {
		if m.Kind == NotLoRA {
			return m
		}
	}
	switch {
	case pddMetadata(a.file) != "":
		return &Misfit{Path: a.Path, Kind: ExtraTensors, Detail: "a PDD adapter (" + pddMetadata(a.file) + " metadata): its per-interval output heads are part of it"}
	case t.Partition != "" && cov.Partition != "" && t.Partition != cov.Partition:
		return &Misfit{Path: a.Path, Kind: Partition, Detail: fmt.Sprintf("made for the %s model, and this request runs on %s", partitionName[cov.Partition], partitionName[t.Partition])}
	case len(cov.Extra) > 0:
		return &Misfit{Path: a.Path, Kind: ExtraTensors, Detail: "tensors that are no LoRA pair", Keys: cov.Extra}
	case len(cov.Unmatched) > 0:
		return &Misfit{Path: a.Path, Kind: Unmatched, Detail: "pairs for modules the model does not have", Keys: cov.Unmatched}
	case len(cov.Unsupported) > 0:
		return &Misfit{Path: a.Path, Kind: Unsupported, Detail: "pairs for linears that take no LoRA side path", Keys: cov.Unsupported}
	case len(misfits) > 0:
		keys := []string{}
		for _, m := range misfits {
			keys = append(keys, m.Keys...)
		}
		return &Misfit{Path: a.Path, Kind: Shape, Detail: misfits[0].Detail, Keys: keys}
	case len(a.Updates) == 0:
		return &Misfit{Path: a.Path, Kind: NotLoRA, Detail: "no pairs"}
	}
	return nil
}

func pairName(p *rawPair) string {
	if p.b != nil {
		return p.b.Name
	}
	return p.a.Name
}

func sortedModules(m map[string]*Update) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// partitionName spells the partitions as the release does.
var partitionName = map[string]string{"fl2va": "FL2VA", "ref2va": "Ref2VA"}

// partitionOf is the partition a file names: an explicit metadata key, or
// lightx2v's "fl2v" / "ref2v" file-name token ("" when neither says).
func partitionOf(f *File) string {
	for _, k := range []string{"partition", "minimax_h3.partition", "h3studio.partition"} {
		switch v := f.Metadata[k]; v {
		case "fl2va", "ref2va":
			return v
		}
	}
	return partitionFromName(f.Path)
}

// SideParams counts the elements of the adapter's run-time factors (every
// update but AdaLN's, which is folded into the modulation tables): all of
// them, and Σ rank·(in+out) over the DiT blocks' (each forward spends
// twice that in FLOP per row).
func (a *Adapter) SideParams() (all, blocks int64) {
	for _, u := range a.Updates {
		if u.Kind == KindAdaLN {
			continue
		}
		n := int64(u.Rank) * int64(u.In+u.Out)
		all += n
		if strings.HasPrefix(u.Module, "blocks.") {
			blocks += n
		}
	}
	return all, blocks
}

// pddMetadata names the alibaba-pai PDD metadata key a file carries ("":
// none): those adapters come with a bank of output heads.
func pddMetadata(f *File) string {
	var keys []string
	for k := range f.Metadata {
		if strings.HasPrefix(k, "pdd_") {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return ""
	}
	return keys[0]
}
