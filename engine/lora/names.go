package lora

import (
	"sort"
	"strings"

	"h3studio/engine/arch"
	"h3studio/engine/weights"
)

// Kind is a kind of DiT linear a LoRA can update, named by the
// checkpoint's module suffix.
type Kind string

// The module kinds of the MiniMax-H3 DiT that adapters in the wild update
// (larryvrh's 259 modules are all five; the token refiner has no AdaLN).
const (
	KindQKV   Kind = "attn.qkv_proj"
	KindOut   Kind = "attn.out_proj"
	KindFC1   Kind = "mlp.fc1"
	KindFC2   Kind = "mlp.fc2"
	KindAdaLN Kind = "adaln_proj.linear"
)

// Kinds lists the kinds in report order.
var Kinds = []Kind{KindQKV, KindOut, KindFC1, KindFC2, KindAdaLN}

// kindOf is the kind of a module name ("blocks.3.mlp.fc1"), if any.
func kindOf(module string) (Kind, bool) {
	for _, k := range Kinds {
		if module == string(k) || strings.HasSuffix(module, "."+string(k)) {
			return k, true
		}
	}
	return "", false
}

// Module is one base linear an adapter may update: PyTorch shape [Out, In].
type Module struct {
	Name    string
	Kind    Kind
	Out, In int
}

// Target is the base model an adapter is matched against.
type Target struct {
	// Modules are the updatable linears by name (TargetOf builds them).
	Modules map[string]Module
	// QKV is the base checkpoint's fused qkv row layout (snapshot
	// discovery's weights.Component.QKV).
	QKV weights.QKVLayout
	// Heads and HeadDim split qkv rows; FFN is the SwiGLU half width.
	Heads, HeadDim, FFN int
	// Partition is "fl2va" or "ref2va" ("" when unknown).
	Partition string
	// Others are the model's other linears (patch projections, condition
	// projection, time embedder, output heads): no adapter in the wild
	// updates them but FastH3's, and they get no side path.
	Others map[string]bool
}

// TargetOf lists a DiT config's updatable modules.
func TargetOf(c *arch.DiT, qkv weights.QKVLayout, partition string) Target {
	t := Target{Modules: map[string]Module{}, QKV: qkv, Heads: c.Heads, HeadDim: c.HeadDim, FFN: c.FFN, Partition: partition,
		Others: map[string]bool{}}
	for name, s := range c.Shapes() {
		stem, ok := strings.CutSuffix(name, ".weight")
		if !ok || len(s) != 2 {
			continue
		}
		if k, ok := kindOf(stem); ok {
			t.Modules[stem] = Module{Name: stem, Kind: k, Out: int(s[0]), In: int(s[1])}
		} else {
			t.Others[stem] = true
		}
	}
	return t
}

// names lists the target's module names in order.
func (t Target) names() []string {
	out := make([]string, 0, len(t.Modules))
	for n := range t.Modules {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// qkvPart is which third of a split attention projection a pair is.
type qkvPart int

const (
	partWhole qkvPart = iota - 1 // not a split projection
	partQ
	partK
	partV
)

// moduleRef is where a file's pair lands on the base.
type moduleRef struct {
	module string
	part   qkvPart
	// swapHalves: the file's fc1 rows are [value | gate] (diffusers'
	// ff.net.0.proj), the checkpoint's [gate | value].
	swapHalves bool
}

// diffusersRenames are diffusers' module tails and the checkpoint's.
var diffusersRenames = []struct {
	from, to string
	part     qkvPart
	swap     bool
}{
	{"attn.to_q", "attn.qkv_proj", partQ, false},
	{"attn.to_k", "attn.qkv_proj", partK, false},
	{"attn.to_v", "attn.qkv_proj", partV, false},
	{"attn.to_out.0", "attn.out_proj", partWhole, false},
	{"ff.net.0.proj", "mlp.fc1", partWhole, true},
	{"ff.net.2", "mlp.fc2", partWhole, false},
}

// diffusersPrefixes are diffusers' container names and the checkpoint's
// (diffusers @58eb52c scripts/convert_minimax_h3_to_diffusers.py key plan).
var diffusersPrefixes = []struct{ from, to string }{
	{"transformer_blocks.", "blocks."},
	{"token_refiner.refiner_blocks.", "token_refiner.blocks."},
	{"norm_out.linear", "final_layer.adaln_proj.linear"},
	// model-level linears (FastH3 updates them)
	{"audio_proj_in", "audio_patch_proj"},
	{"audio_proj_out", "final_layer.audio_out"},
	{"proj_in", "video_patch_proj"},
	{"proj_out", "final_layer.video_out"},
	{"context_embedder", "condition_proj"},
	{"time_embedder.linear_1", "time_embedder.proj_in"},
	{"time_embedder.linear_2", "time_embedder.proj_out"},
}

// diffusersPrefix renames a diffusers container prefix (or a whole
// model-level module name) to the checkpoint's.
func diffusersPrefix(key string) (string, bool) {
	for _, r := range diffusersPrefixes {
		if rest, ok := strings.CutPrefix(key, r.from); ok && (rest == "" || strings.HasSuffix(r.from, ".")) {
			return r.to + rest, true
		}
	}
	return key, false
}

// unsupported reports whether a file key names one of the model's linears that
// take no side path.
func (f *File) unsupported(key string, t Target) bool {
	key, _ = diffusersPrefix(key)
	if f.kohya {
		for n := range t.Others {
			if strings.ReplaceAll(n, ".", "_") == key {
				return true
			}
		}
	}
	return t.Others[key]
}

// diffusersModule maps a diffusers module key to the checkpoint's.
func diffusersModule(key string) (string, moduleRef, bool) {
	for _, r := range diffusersRenames {
		if stem, ok := strings.CutSuffix(key, "."+r.from); ok {
			m := stem + "." + r.to
			return m, moduleRef{module: m, part: r.part, swapHalves: r.swap}, true
		}
	}
	return "", moduleRef{}, false
}

// resolve maps a file key to a target module; ok is false when the model
// has no such module.
func (f *File) resolve(key string, t Target) (moduleRef, bool) {
	key, renamed := diffusersPrefix(key)
	if m, ref, ok := diffusersModule(key); ok {
		_, has := t.Modules[m]
		return ref, has
	}
	if renamed {
		_, has := t.Modules[key]
		return moduleRef{module: key, part: partWhole}, has
	}
	if f.kohya {
		for _, n := range t.names() {
			if strings.ReplaceAll(n, ".", "_") == key {
				return moduleRef{module: n, part: partWhole}, true
			}
		}
		return moduleRef{}, false
	}
	_, has := t.Modules[key]
	return moduleRef{module: key, part: partWhole}, has
}
