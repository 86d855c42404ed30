package lora

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/weights"
	"h3studio/engine/weights/safetensors"
)

// tensor is one stored tensor of a synthetic LoRA file.
type tensor struct {
	shape []int64
	v     []float32
}

// synth writes a LoRA file of the given tensors (F32) with metadata.
func synth(t *testing.T, name string, ts map[string]tensor, md map[string]string) string {
	t.Helper()
	w := &safetensors.Writer{Metadata: md}
	for n, x := range ts {
		if err := w.AddFloat32(n, safetensors.F32, x.shape, x.v); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), name)
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func randT(rng *rand.Rand, shape ...int64) tensor {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return tensor{shape: shape, v: v}
}

// tiny is the tiny DiT's target (2 blocks, 3 heads of 32, hidden 64).
func tiny(qkv weights.QKVLayout) Target {
	return TargetOf(arch.TinyDiT(), qkv, "fl2va")
}

// pairs adds a rank-r pair for module under the naming functions.
func pairs(ts map[string]tensor, rng *rand.Rand, module string, r int64, out, in int, aName, bName string) {
	ts[module+aName] = randT(rng, r, int64(in))
	ts[module+bName] = randT(rng, int64(out), r)
}

// allModules writes a pair for every module of the tiny target, named by
// rename, with the given suffixes and optional alpha.
func allModules(rng *rand.Rand, tg Target, rename func(string) string, a, b string, alpha float32) map[string]tensor {
	ts := map[string]tensor{}
	for _, m := range tg.Modules {
		n := rename(m.Name)
		pairs(ts, rng, n, 4, m.Out, m.In, a, b)
		if alpha > 0 {
			ts[n+".alpha"] = tensor{shape: nil, v: []float32{alpha}}
		}
	}
	return ts
}

func TestLayoutsMatchEveryModule(t *testing.T) {
	tg := tiny(weights.QKVInterleaved)
	rng := rand.New(rand.NewPCG(1, 2))
	same := func(s string) string { return s }
	cases := []struct {
		name   string
		ts     map[string]tensor
		layout Layout
		scale  float64
		qkv    weights.QKVLayout
	}{
		{"bare.safetensors", allModules(rng, tg, same, ".lora_A.weight", ".lora_B.weight", 0), PEFT, 1, weights.QKVFlat},
		{"peft.safetensors", allModules(rng, tg, func(s string) string { return "base_model.model." + s }, ".lora_A.default.weight", ".lora_B.default.weight", 0),
			PEFT, 1, weights.QKVInterleaved},
		{"comfy.safetensors", allModules(rng, tg, func(s string) string { return "diffusion_model." + s }, ".lora_down.weight", ".lora_up.weight", 8), Kohya, 2, weights.QKVFlat},
		{"kohya.safetensors", allModules(rng, tg, func(s string) string { return "lora_unet_" + strings.ReplaceAll(s, ".", "_") }, ".lora_down.weight", ".lora_up.weight", 2),
			Kohya, 0.5, weights.QKVFlat},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Open(synth(t, c.name, c.ts, nil))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			a, err := Match(f, tg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			cov := a.Coverage
			if cov.Layout != c.layout || cov.Matched() != len(tg.Modules) || cov.QKV != c.qkv {
				t.Fatalf("layout %s, %d of %d modules, qkv %s; want %s, all, %s", cov.Layout, cov.Matched(), len(tg.Modules), cov.QKV, c.layout, c.qkv)
			}
			want := map[Kind]int{KindQKV: 4, KindOut: 4, KindFC1: 4, KindFC2: 4, KindAdaLN: 3}
			for k, n := range want {
				if cov.Modules[k] != n || cov.Targets[k] != n {
					t.Errorf("%s: %d matched of %d, want %d", k, cov.Modules[k], cov.Targets[k], n)
				}
			}
			for _, u := range a.Updates {
				if u.Scale != c.scale || u.Rank != 4 {
					t.Fatalf("%s: scale %g rank %d, want %g and 4", u.Module, u.Scale, u.Rank, c.scale)
				}
			}
		})
	}
}

// delta is Scale·B·A of an update, in float64, [Out][In].
func delta(t *testing.T, u *Update) [][]float64 {
	a, b, err := u.Load()
	if err != nil {
		t.Fatal(err)
	}
	d := make([][]float64, u.Out)
	for i := range d {
		d[i] = make([]float64, u.In)
		for j := range d[i] {
			var s float64
			for k := 0; k < u.Rank; k++ {
				s += float64(b[i*u.Rank+k]) * float64(a[k*u.In+j])
			}
			d[i][j] = u.Scale * s
		}
	}
	return d
}

// product is ratio·B·A of one stored pair, [out][in].
func product(a, b tensor, ratio float64) [][]float64 {
	r, in, out := int(a.shape[0]), int(a.shape[1]), int(b.shape[0])
	d := make([][]float64, out)
	for i := range d {
		d[i] = make([]float64, in)
		for j := range d[i] {
			for k := 0; k < r; k++ {
				d[i][j] += ratio * float64(b.v[i*r+k]) * float64(a.v[k*in+j])
			}
		}
	}
	return d
}

func closeRows(t *testing.T, what string, got, want [][]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d rows, want %d", what, len(got), len(want))
	}
	for i := range want {
		for j := range want[i] {
			if math.Abs(got[i][j]-want[i][j]) > 1e-5*(1+math.Abs(want[i][j])) {
				t.Fatalf("%s: [%d][%d] = %g, want %g", what, i, j, got[i][j], want[i][j])
			}
		}
	}
}

// TestDiffusersSplitFusesExactly builds the expected fused qkv and fc1
// updates by definition (each part's own alpha/rank; q, k, v row blocks
// regrouped per head for an interleaved base; fc1 halves swapped) and
// compares them with what Load returns.
func TestDiffusersSplitFusesExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	c := arch.TinyDiT()
	inner, h, hd := c.Inner(), c.Heads, c.HeadDim
	ts := map[string]tensor{}
	alphas := map[string]float32{"to_q": 4, "to_k": 2, "to_v": 1}
	ranks := map[string]int64{"to_q": 4, "to_k": 4, "to_v": 2}
	pre := "transformer.blocks.1."
	for _, p := range []string{"to_q", "to_k", "to_v"} {
		pairs(ts, rng, pre+"attn."+p, ranks[p], inner, c.Hidden, ".lora_A.weight", ".lora_B.weight")
		ts[pre+"attn."+p+".alpha"] = tensor{v: []float32{alphas[p]}}
	}
	pairs(ts, rng, pre+"ff.net.0.proj", 3, 2*c.FFN, c.Hidden, ".lora_A.weight", ".lora_B.weight")
	parts := func(p string) [][]float64 {
		return product(ts[pre+"attn."+p+".lora_A.weight"], ts[pre+"attn."+p+".lora_B.weight"], float64(alphas[p])/float64(ranks[p]))
	}
	q, k, v := parts("to_q"), parts("to_k"), parts("to_v")
	flat := append(append(append([][]float64{}, q...), k...), v...)
	var inter [][]float64
	for head := 0; head < h; head++ {
		for _, m := range [][][]float64{q, k, v} {
			inter = append(inter, m[head*hd:(head+1)*hd]...)
		}
	}
	fc1 := product(ts[pre+"ff.net.0.proj.lora_A.weight"], ts[pre+"ff.net.0.proj.lora_B.weight"], 1)
	fc1 = append(append([][]float64{}, fc1[c.FFN:]...), fc1[:c.FFN]...) // value-first -> gate first
	path := synth(t, "split.safetensors", ts, nil)
	for _, base := range []weights.QKVLayout{weights.QKVFlat, weights.QKVInterleaved} {
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Match(f, tiny(base), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Coverage.Layout != Diffusers || len(a.Updates) != 2 {
			t.Fatalf("layout %s, %d updates", a.Coverage.Layout, len(a.Updates))
		}
		for _, u := range a.Updates {
			switch u.Module {
			case "blocks.1.attn.qkv_proj":
				want := map[weights.QKVLayout][][]float64{weights.QKVFlat: flat, weights.QKVInterleaved: inter}[base]
				closeRows(t, "qkv on "+string(base), delta(t, u), want)
			case "blocks.1.mlp.fc1":
				closeRows(t, "fc1", delta(t, u), fc1)
			default:
				t.Fatalf("unexpected update %s", u.Module)
			}
		}
		f.Close()
	}
}

// TestFusedQKVLayouts: a fused flat update on an interleaved base is
// regrouped per head; --lora-qkv interleaved leaves it as stored; on a flat
// base a flat update is unchanged.
func TestFusedQKVLayouts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	c := arch.TinyDiT()
	ts := map[string]tensor{}
	pairs(ts, rng, "blocks.0.attn.qkv_proj", 4, 3*c.Inner(), c.Hidden, ".lora_A.weight", ".lora_B.weight")
	stored := product(ts["blocks.0.attn.qkv_proj.lora_A.weight"], ts["blocks.0.attn.qkv_proj.lora_B.weight"], 1)
	inner, hd := c.Inner(), c.HeadDim
	var regrouped [][]float64
	for h := 0; h < c.Heads; h++ {
		for p := 0; p < 3; p++ {
			regrouped = append(regrouped, stored[p*inner+h*hd:p*inner+(h+1)*hd]...)
		}
	}
	path := synth(t, "fused.safetensors", ts, nil)
	for _, tc := range []struct {
		base   weights.QKVLayout
		choice QKVChoice
		want   [][]float64
	}{
		{weights.QKVInterleaved, QKVAuto, regrouped},
		{weights.QKVInterleaved, QKVInterleaved, stored},
		{weights.QKVFlat, QKVAuto, stored},
	} {
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		a, err := Match(f, tiny(tc.base), Options{QKV: tc.choice})
		if err != nil {
			t.Fatal(err)
		}
		closeRows(t, fmt.Sprintf("%s base, %s", tc.base, tc.choice), delta(t, a.Updates[0]), tc.want)
		f.Close()
	}
}

func TestRefusals(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	c := arch.TinyDiT()
	ok := func() map[string]tensor {
		ts := map[string]tensor{}
		pairs(ts, rng, "blocks.0.mlp.fc2", 4, c.Hidden, c.FFN, ".lora_A.weight", ".lora_B.weight")
		return ts
	}
	cases := []struct {
		name string
		file string
		edit func(map[string]tensor)
		kind MisfitKind
	}{
		{"shape", "a.safetensors", func(ts map[string]tensor) {
			pairs(ts, rng, "blocks.1.mlp.fc2", 4, c.Hidden, c.FFN+32, ".lora_A.weight", ".lora_B.weight")
		}, Shape},
		{"unmatched", "a.safetensors", func(ts map[string]tensor) {
			pairs(ts, rng, "blocks.7.mlp.fc2", 4, c.Hidden, c.FFN, ".lora_A.weight", ".lora_B.weight")
		}, Unmatched},
		{"extra heads", "a.safetensors", func(ts map[string]tensor) { ts["heads.3.proj.weight"] = randT(rng, 8, 8) }, ExtraTensors},
		{"half", "a.safetensors", func(ts map[string]tensor) { ts["blocks.1.mlp.fc1.lora_A.weight"] = randT(rng, 4, int64(c.Hidden)) }, NotLoRA},
		{"partition", "minimax_h3_ref2v_turbo.safetensors", func(map[string]tensor) {}, Partition},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := ok()
			tc.edit(ts)
			f, err := Open(synth(t, tc.file, ts, nil))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			_, err = Match(f, tiny(weights.QKVInterleaved), Options{})
			var mf *Misfit
			if !errors.As(err, &mf) || mf.Kind != tc.kind {
				t.Fatalf("got %v, want a %s misfit", err, tc.kind)
			}
			t.Log(err)
		})
	}
	t.Run("not a lora", func(t *testing.T) {
		_, err := Open(synth(t, "w.safetensors", map[string]tensor{"blocks.0.mlp.fc2.weight": randT(rng, 4, 4)}, nil))
		var mf *Misfit
		if !errors.As(err, &mf) || mf.Kind != NotLoRA {
			t.Fatalf("got %v, want a not-a-LoRA misfit", err)
		}
	})
}

// TestCoverageReportsUnmatchedAndIgnored: Inspect keeps the coverage of a
// file that does not fit, for `info --lora`.
func TestCoverageReportsUnmatchedAndIgnored(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	c := arch.TinyDiT()
	ts := map[string]tensor{"blocks.0.attn.out_proj.alpha": {v: []float32{1}}}
	pairs(ts, rng, "blocks.0.mlp.fc2", 4, c.Hidden, c.FFN, ".lora_A.weight", ".lora_B.weight")
	pairs(ts, rng, "blocks.9.mlp.fc2", 4, c.Hidden, c.FFN, ".lora_A.weight", ".lora_B.weight")
	f, err := Open(synth(t, "c.safetensors", ts, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := Inspect(f, tiny(weights.QKVFlat), Options{})
	if err == nil {
		t.Fatal("a file with an unmatched pair was accepted")
	}
	cov := a.Coverage
	if cov.Modules[KindFC2] != 1 || len(cov.Unmatched) != 1 || cov.Unmatched[0] != "blocks.9.mlp.fc2.lora_B.weight" ||
		len(cov.Ignored) != 1 || cov.Ignored[0] != "blocks.0.attn.out_proj.alpha" {
		t.Fatalf("coverage %+v", cov)
	}
}

// The spellings of the files in the wild (names and metadata as the
// evidence reports them) map onto the checkpoint's modules with the
// alpha and qkv reading their producers meant.
func TestFilesInTheWild(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	c := arch.TinyDiT()
	inner, h := c.Inner(), c.Hidden
	lightx2v := func(ts map[string]tensor) {
		for _, p := range []string{"transformer_blocks.0.", "token_refiner.refiner_blocks.1."} {
			for _, q := range []string{"attn.to_q", "attn.to_k", "attn.to_v"} {
				pairs(ts, rng, p+q, 4, inner, h, ".lora_A.default.weight", ".lora_B.default.weight")
			}
			pairs(ts, rng, p+"attn.to_out.0", 4, h, inner, ".lora_A.default.weight", ".lora_B.default.weight")
			pairs(ts, rng, p+"ff.net.0.proj", 4, 2*c.FFN, h, ".lora_A.default.weight", ".lora_B.default.weight")
			pairs(ts, rng, p+"ff.net.2", 4, h, c.FFN, ".lora_A.default.weight", ".lora_B.default.weight")
		}
	}
	cases := []struct {
		name    string
		file    string
		md      map[string]string
		build   func(map[string]tensor)
		layout  Layout
		modules int
		scale   float64 // of attn.out_proj
		qkv     weights.QKVLayout
		refuse  MisfitKind
	}{
		{"lightx2v diffusers, alpha in the header", "minimax_h3_fl2v_turbo_8step_v1.0_bf16.safetensors", map[string]string{"alpha": "8", "key_format": "minimax-h3-diffusers"},
			lightx2v, Diffusers, 8, 2, weights.QKVFlat, ""},
		{"lightx2v v0.1, no alpha anywhere", "minimax_h3_fl2v_turbo_4step_v0.1.safetensors", nil, lightx2v, Diffusers, 8, 2, weights.QKVFlat, ""},
		{"DiffSynth .default. on native names", "ds.safetensors", nil, func(ts map[string]tensor) {
			pairs(ts, rng, "blocks.0.attn.qkv_proj", 4, 3*inner, h, ".lora_A.default.weight", ".lora_B.default.weight")
			pairs(ts, rng, "blocks.0.attn.out_proj", 4, h, inner, ".lora_A.default.weight", ".lora_B.default.weight")
		}, PEFT, 2, 1, weights.QKVInterleaved, ""},
		{"FlashGen native key format", "fg.safetensors", map[string]string{"key_format": "minimax-h3-native"}, func(ts map[string]tensor) {
			pairs(ts, rng, "blocks.0.attn.qkv_proj", 4, 3*inner, h, ".lora_A.weight", ".lora_B.weight")
			pairs(ts, rng, "blocks.0.attn.out_proj", 4, h, inner, ".lora_A.weight", ".lora_B.weight")
		}, PEFT, 2, 1, weights.QKVInterleaved, ""},
		{"diffusers final layer and adaln", "d.safetensors", nil, func(ts map[string]tensor) {
			pairs(ts, rng, "transformer.norm_out.linear", 2, 2*h, c.TimeDim, ".lora_A.weight", ".lora_B.weight")
			pairs(ts, rng, "transformer.transformer_blocks.1.adaln_proj.linear", 2, c.AdaLNOut, c.TimeDim, ".lora_A.weight", ".lora_B.weight")
			pairs(ts, rng, "transformer.transformer_blocks.1.attn.to_out.0", 2, h, inner, ".lora_A.weight", ".lora_B.weight")
		}, Diffusers, 3, 1, "", ""},
		{"TaoMate bare .lora_a/.lora_b", "tao.safetensors", nil, func(ts map[string]tensor) {
			pairs(ts, rng, "blocks.1.attn.out_proj", 4, h, inner, ".lora_a", ".lora_b")
		}, PEFT, 1, 1, "", ""},
		{"PDD trunk with its head bank", "pdd.safetensors", map[string]string{"pdd_num_steps": "32", "pdd_block_size": "4"}, func(ts map[string]tensor) {
			pairs(ts, rng, "transformer_blocks.0.attn.to_out.0", 4, h, inner, ".lora_down", ".lora_up")
		}, Diffusers, 1, 1, "", ExtraTensors},
		{"FastH3 model-level linears", "fast.safetensors", nil, func(ts map[string]tensor) {
			pairs(ts, rng, "blocks.0.attn.out_proj", 4, h, inner, ".lora_A.weight", ".lora_B.weight")
			pairs(ts, rng, "context_embedder", 4, h, c.TextDim, ".lora_A.weight", ".lora_B.weight")
			pairs(ts, rng, "time_embedder.linear_1", 4, c.TimeHidden, c.TimestepDim, ".lora_A.weight", ".lora_B.weight")
		}, Diffusers, 1, 1, "", Unsupported},
		{"FastH3 full-rank deltas", "fast.safetensors", nil, func(ts map[string]tensor) {
			pairs(ts, rng, "blocks.0.attn.out_proj", 4, h, inner, ".lora_A.weight", ".lora_B.weight")
			ts["blocks.0.norm1.diff"] = randT(rng, int64(h))
		}, PEFT, 1, 1, "", ExtraTensors},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := map[string]tensor{}
			tc.build(ts)
			f, err := Open(synth(t, tc.file, ts, tc.md))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			a, err := Inspect(f, tiny(weights.QKVInterleaved), Options{})
			var mf *Misfit
			switch {
			case tc.refuse != "" && (!errors.As(err, &mf) || mf.Kind != tc.refuse):
				t.Fatalf("got %v, want a %s misfit", err, tc.refuse)
			case tc.refuse == "" && err != nil:
				t.Fatal(err)
			}
			cov := a.Coverage
			if cov.Layout != tc.layout || cov.Matched() != tc.modules || cov.QKV != tc.qkv {
				t.Fatalf("layout %s, %d modules, qkv %q; want %s, %d, %q (%+v)", cov.Layout, cov.Matched(), cov.QKV, tc.layout, tc.modules, tc.qkv, cov)
			}
			if s, ok := cov.Scale[KindOut]; ok && s != tc.scale {
				t.Errorf("out_proj scale %g (%s), want %g", s, cov.AlphaSource, tc.scale)
			}
		})
	}
}

// A PEFT save_pretrained folder keeps alpha in adapter_config.json: its
// lora_alpha, alpha_pattern and use_rslora set the scales; a config that
// does not parse is refused; beside a file of another name it is ignored.
func TestPEFTAdapterConfig(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	c := arch.TinyDiT()
	ts := map[string]tensor{}
	pairs(ts, rng, "base_model.model.blocks.0.attn.out_proj", 4, c.Hidden, c.Inner(), ".lora_A.weight", ".lora_B.weight")
	pairs(ts, rng, "base_model.model.blocks.0.mlp.fc2", 4, c.Hidden, c.FFN, ".lora_A.weight", ".lora_B.weight")
	dir := filepath.Dir(synth(t, "adapter_model.safetensors", ts, nil))
	path := filepath.Join(dir, "adapter_model.safetensors")
	scales := func(p string) (map[Kind]float64, error) {
		f, err := Open(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		a, err := Match(f, tiny(weights.QKVFlat), Options{})
		if err != nil {
			return nil, err
		}
		return a.Coverage.Scale, nil
	}
	for _, tc := range []struct {
		config   string
		out, fc2 float64
	}{
		{`{"r": 4, "lora_alpha": 8}`, 2, 2},
		{`{"r": 4, "lora_alpha": 8, "alpha_pattern": {"mlp.fc2": 2}}`, 2, 0.5},
		{`{"r": 4, "lora_alpha": 8, "use_rslora": true}`, 4, 4},
	} {
		if err := os.WriteFile(filepath.Join(dir, "adapter_config.json"), []byte(tc.config), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := scales(path)
		if err != nil || s[KindOut] != tc.out || s[KindFC2] != tc.fc2 {
			t.Errorf("%s: scales %v (%v), want out %g fc2 %g", tc.config, s, err, tc.out, tc.fc2)
		}
	}
	other := filepath.Join(dir, "style.safetensors")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if s, err := scales(other); err != nil || s[KindOut] != 1 {
		t.Errorf("a config beside another file's name was read: %v, %v", s, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "adapter_config.json"), []byte(`{"lora_alpha": `), 0o644); err != nil {
		t.Fatal(err)
	}
	var mf *Misfit
	if _, err := scales(path); !errors.As(err, &mf) || mf.Kind != NotLoRA {
		t.Errorf("a damaged adapter_config.json: %v", err)
	}
}
