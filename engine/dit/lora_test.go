package dit

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/engine/lora"
	"h3studio/engine/plan"
	"h3studio/engine/weights"
	"h3studio/engine/weights/safetensors"
)

// oracleTol is the side path against the same model with W + s·B·A merged
// in float64: both run in f32, only the summation order differs.
const oracleTol = 2e-5

// factor is a stored LoRA tensor, row-major [rows, cols].
type factor struct {
	rows, cols int
	v          []float64
}

func randFactor(rng *rand.Rand, rows, cols int, std float64) factor {
	f := factor{rows: rows, cols: cols, v: make([]float64, rows*cols)}
	for i := range f.v {
		f.v[i] = float64(float32(std * rng.NormFloat64())) // as stored (f32)
	}
	return f
}

func (f factor) f32() []float32 {
	out := make([]float32, len(f.v))
	for i, x := range f.v {
		out[i] = float32(x)
	}
	return out
}

// mul is b·a in float64: [b.rows, a.cols].
func mul(b, a factor) factor {
	out := factor{rows: b.rows, cols: a.cols, v: make([]float64, b.rows*a.cols)}
	for i := 0; i < b.rows; i++ {
		for k := 0; k < b.cols; k++ {
			bv := b.v[i*b.cols+k]
			for j := 0; j < a.cols; j++ {
				out.v[i*a.cols+j] += bv * a.v[k*a.cols+j]
			}
		}
	}
	return out
}

// oracleLoRA is a LoRA written to a file and its merged updates ΔW (with
// alpha/rank folded) per module, in the base's (interleaved) row order,
// built by definition rather than by the loader.
type oracleLoRA struct {
	path  string
	delta map[string]factor
}

// interleaveRows regroups flat [q | k | v] rows per head, [h: q, k, v].
func interleaveRows(d factor, heads, hd int) factor {
	out := factor{rows: d.rows, cols: d.cols}
	inner := heads * hd
	for h := 0; h < heads; h++ {
		for p := 0; p < 3; p++ {
			start := (p*inner + h*hd) * d.cols
			out.v = append(out.v, d.v[start:start+hd*d.cols]...)
		}
	}
	return out
}

// bareLoRA is a rank-4 PEFT file (no alpha) over every module of the
// fixture model, qkv B rows flat as the trainers write them.
func bareLoRA(t *testing.T, cfg *Config, rng *rand.Rand) oracleLoRA {
	o := oracleLoRA{path: filepath.Join(t.TempDir(), "bare.safetensors"), delta: map[string]factor{}}
	w := &safetensors.Writer{}
	tg := lora.TargetOf(cfg, weights.QKVInterleaved, "")
	for name, m := range tg.Modules {
		a := randFactor(rng, 4, m.In, 1/math.Sqrt(float64(m.In)))
		b := randFactor(rng, m.Out, 4, 0.1)
		add(t, w, name+".lora_A.weight", a)
		add(t, w, name+".lora_B.weight", b)
		d := mul(b, a)
		if m.Kind == lora.KindQKV {
			d = interleaveRows(d, cfg.Heads, cfg.HeadDim)
		}
		o.delta[name] = d
	}
	if err := w.WriteFile(o.path); err != nil {
		t.Fatal(err)
	}
	return o
}

// splitLoRA is a diffusers file on block 1: to_q and to_v only (alpha 8,
// rank 2) and the value-first ff.net.0.proj (alpha 1, rank 2).
func splitLoRA(t *testing.T, cfg *Config, rng *rand.Rand) oracleLoRA {
	o := oracleLoRA{path: filepath.Join(t.TempDir(), "split.safetensors"), delta: map[string]factor{}}
	w := &safetensors.Writer{}
	inner, h := cfg.Inner(), cfg.Hidden
	qkv := factor{rows: 3 * inner, cols: h, v: make([]float64, 3*inner*h)}
	for p, name := range []string{"to_q", "to_k", "to_v"} {
		if name == "to_k" {
			continue
		}
		a, b := randFactor(rng, 2, h, 1/math.Sqrt(float64(h))), randFactor(rng, inner, 2, 0.1)
		key := "transformer.blocks.1.attn." + name
		add(t, w, key+".lora_A.weight", a)
		add(t, w, key+".lora_B.weight", b)
		add(t, w, key+".alpha", factor{rows: 1, cols: 1, v: []float64{8}})
		d := mul(b, a)
		for i, v := range d.v {
			qkv.v[p*inner*h+i] = v * 8 / 2
		}
	}
	o.delta["blocks.1.attn.qkv_proj"] = interleaveRows(qkv, cfg.Heads, cfg.HeadDim)
	a, b := randFactor(rng, 2, h, 1/math.Sqrt(float64(h))), randFactor(rng, 2*cfg.FFN, 2, 0.1)
	add(t, w, "transformer.blocks.1.ff.net.0.proj.lora_A.weight", a)
	add(t, w, "transformer.blocks.1.ff.net.0.proj.lora_B.weight", b)
	add(t, w, "transformer.blocks.1.ff.net.0.proj.alpha", factor{rows: 1, cols: 1, v: []float64{1}})
	d := mul(b, a)
	half := cfg.FFN * h
	swapped := append(append([]float64{}, d.v[half:]...), d.v[:half]...) // [value | gate] -> [gate | value]
	for i := range swapped {
		swapped[i] /= 2
	}
	o.delta["blocks.1.mlp.fc1"] = factor{rows: d.rows, cols: d.cols, v: swapped}
	if err := w.WriteFile(o.path); err != nil {
		t.Fatal(err)
	}
	return o
}

func add(t *testing.T, w *safetensors.Writer, name string, f factor) {
	t.Helper()
	shape := []int64{int64(f.rows), int64(f.cols)}
	if f.rows*f.cols == 1 && strings.HasSuffix(name, ".alpha") {
		shape = nil
	}
	if err := w.AddFloat32(name, safetensors.F32, shape, f.f32()); err != nil {
		t.Fatal(err)
	}
}

// mergedModel writes the fixture's weights with Σ s·ΔW added in float64
// and loads it.
func mergedModel(t *testing.T, b *ggml.Backend, o Options, terms map[*oracleLoRA]float64) *Model {
	t.Helper()
	src, err := weights.OpenSafetensors(filepath.Join(fixtureDir, "weights.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	w := &safetensors.Writer{}
	for _, ti := range src.Tensors() {
		v, err := weights.Float32(src, ti.Name)
		if err != nil {
			t.Fatal(err)
		}
		stem := strings.TrimSuffix(ti.Name, ".weight")
		for ol, s := range terms {
			if d, ok := ol.delta[stem]; ok && stem != ti.Name {
				for i := range v {
					v[i] = float32(float64(v[i]) + s*d.v[i])
				}
			}
		}
		if err := w.AddFloat32(ti.Name, safetensors.F32, ti.Shape, v); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "merged.safetensors")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	msrc, err := weights.OpenSafetensors(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { msrc.Close() })
	o.QKV = weights.QKVInterleaved
	m, err := Load(b, msrc, tinyConfig(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

func adapter(t *testing.T, path string, cfg *Config) *lora.Adapter {
	t.Helper()
	f, err := lora.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	a, err := lora.Match(f, lora.TargetOf(cfg, weights.QKVInterleaved, ""), lora.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// TestSideMatchesMergedOracle: two stacked adapters (every module kind,
// refiner and final layer included; a diffusers split with a missing
// part) through the run-time side path equal the model whose weights have
// W + Σ s·B·A merged in float64, at two sets of strengths set on the same
// loaded base, resident and streamed.
func TestSideMatchesMergedOracle(t *testing.T) {
	b := cpuBackend(t)
	cfg := tinyConfig(t)
	rng := rand.New(rand.NewPCG(17, 1))
	bare, split := bareLoRA(t, cfg, rng), splitLoRA(t, cfg, rng)
	ab, as := adapter(t, bare.path, cfg), adapter(t, split.path, cfg)
	opt := Options{Precision: ggml.Exact()}
	for _, res := range []Options{opt, {Precision: opt.Precision, Residency: plan.Streamed}} {
		m := loadTiny(t, b, false, res)
		for _, s := range [][2]float64{{1, 0.7}, {-0.5, 1.5}} {
			if err := m.SetLoRAs([]LoRA{{ab, s[0]}, {as, s[1]}}); err != nil {
				t.Fatal(err)
			}
			_, _, gv, ga := runCase(t, m, "t2va")
			ref := mergedModel(t, b, opt, map[*oracleLoRA]float64{&bare: s[0], &split: s[1]})
			_, _, wv, wa := runCase(t, ref, "t2va")
			base := map[bool]string{false: "resident", true: "streamed"}[res.Residency != ""]
			expectClose(t, base+" video", gv, wv, oracleTol)
			expectClose(t, base+" audio", ga, wa, oracleTol)
		}
	}
}

// TestStrengthZeroIsBitIdentical: an adapter set at strength 0 changes no
// bit of the forward, and moving its strength keeps its factors placed.
func TestStrengthZeroIsBitIdentical(t *testing.T) {
	b := cpuBackend(t)
	cfg := tinyConfig(t)
	bare := bareLoRA(t, cfg, rand.New(rand.NewPCG(2, 3)))
	m := loadTiny(t, b, false, Options{Precision: exactKV})
	_, _, v0, a0 := runCase(t, m, "t2va")
	ad := adapter(t, bare.path, cfg)
	if err := m.SetLoRAs([]LoRA{{ad, 1}}); err != nil {
		t.Fatal(err)
	}
	placed := m.lora.res[ad]
	if err := m.SetLoRAs([]LoRA{{ad, 0}}); err != nil {
		t.Fatal(err)
	}
	_, _, v1, a1 := runCase(t, m, "t2va")
	if err := m.SetLoRAs([]LoRA{{ad, 0.5}}); err != nil {
		t.Fatal(err)
	}
	if placed == nil || m.lora.res[ad] != placed {
		t.Error("changing the strength placed the adapter's factors again")
	}
	for i := range v0 {
		if math.Float32bits(v0[i]) != math.Float32bits(v1[i]) {
			t.Fatalf("video[%d]: %g with the adapter at 0, %g without", i, v1[i], v0[i])
		}
	}
	for i := range a0 {
		if math.Float32bits(a0[i]) != math.Float32bits(a1[i]) {
			t.Fatalf("audio[%d]: %g with the adapter at 0, %g without", i, a1[i], a0[i])
		}
	}
}

// The side paths (f16 factors, the render default; and the f32 AdaLN fold)
// use only ops the Metal backend runs: no silent CPU fallback.
func TestLoRAMetalAudit(t *testing.T) {
	b := cpuBackend(t)
	cfg := tinyConfig(t)
	bare := bareLoRA(t, cfg, rand.New(rand.NewPCG(5, 5)))
	for _, o := range []Options{{}, {Residency: plan.Streamed, Precision: ggml.Precision{Weights: ggml.StoreAs(ggml.Q8_0)}}} {
		m := loadTiny(t, b, false, o)
		if err := m.SetLoRAs([]LoRA{{adapter(t, bare.path, cfg), 1}}); err != nil {
			t.Fatal(err)
		}
		if dt := m.lora.res[m.lora.list[0].Adapter].a["blocks.0.mlp.fc1"].DType(); dt != ggml.F16 {
			t.Errorf("factors stored as %s, want f16", dt)
		}
		graphs := auditAll(t, m)
		runCase(t, m, "t2va")
		if *graphs < 4 {
			t.Errorf("only %d graphs seen", *graphs)
		}
	}
}

// Beside q8_0 weights a factor whose rows are whole q8_0 blocks (the A of
// a linear whose input is a multiple of 32 wide) is placed q8_0, the
// others and the rank-4 B stay f16, and
// the planner's count (LoRABytes) is what is placed.
func TestLoRAFactorsFollowQ8Base(t *testing.T) {
	b := cpuBackend(t)
	cfg := tinyConfig(t)
	bare := bareLoRA(t, cfg, rand.New(rand.NewPCG(5, 8)))
	p := ggml.Precision{Weights: ggml.StoreAs(ggml.Q8_0)}
	m := loadTiny(t, b, false, Options{Precision: p})
	ad := adapter(t, bare.path, cfg)
	if err := m.SetLoRAs([]LoRA{{ad, 1}}); err != nil {
		t.Fatal(err)
	}
	r := m.lora.res[ad]
	var placed int64
	quantized := 0
	for _, u := range ad.Updates {
		a, bt := r.a[u.Module], r.b[u.Module]
		if a == nil {
			continue // AdaLN: folded into the tables
		}
		wantA := ggml.F16
		if u.In%32 == 0 {
			wantA = ggml.Q8_0
			quantized++
		}
		if a.DType() != wantA || bt.DType() != ggml.F16 {
			t.Errorf("%s: factors %s/%s, want %s A (rows of %d) and f16 B (rows of %d)", u.Module, a.DType(), bt.DType(), wantA, u.In, u.Rank)
		}
		placed += int64(a.Ne(1)*a.DType().RowBytes(a.Ne(0)) + bt.Ne(1)*bt.DType().RowBytes(bt.Ne(0)))
	}
	if quantized == 0 {
		t.Error("no factor of the tiny model has rows of whole q8_0 blocks: the test checks nothing")
	}
	if got := LoRABytes(ad, p); got != placed || placed == 0 {
		t.Errorf("LoRABytes %d, the placed factors take %d", got, placed)
	}
}
