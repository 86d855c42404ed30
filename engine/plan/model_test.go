package plan

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/layout"
)

func within(got, want, rel float64) bool { return math.Abs(got-want) <= rel*math.Abs(want) }

// mustReleaseDims is the release profile's dimensions.
func mustReleaseDims(t *testing.T) Dims {
	t.Helper()
	d, err := releaseDims()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The release profile's dimensions are the shared H3 facts' (§1, §2, §4, §7).
func TestReleaseDims(t *testing.T) {
	m, err := LookupModel("official-q4_k")
	if err != nil {
		t.Fatal(err)
	}
	got := m.Dims
	got.coreBlock, got.adaLNBlock, got.trunk, got.qLayer, got.qEmbed, got.vision = 0, 0, 0, 0, 0, 0
	got.VAEEncParams, got.VAEDecParams, got.AudioVAEParams = 0, 0, 0
	want := Dims{
		Hidden: 5376, Heads: 56, HeadDim: 128, FFN: 14336, Blocks: 50, RefinerBlocks: 2,
		TextDim: 5120, TimeIn: 256, TimeHidden: 5376, TimeEmbed: 2688, LatentCh: 24, AudioCh: 32,
		QHidden: 5120, QInter: 25600, QHeads: 64, QKVHeads: 8, QHeadDim: 128,
		QLayersUsed: 50, QLayers: 64, QVocab: 151936,
		VHidden: 1152, VMLP: 4304, VLayers: 27, VDeepstack: 3,
		DecDim: 2048, DecMLP: 8192, DecBlocks: 36, VAEClipLength: 17, VAETimeRatio: 4, VAETokenDrop: 3, VAETile: 256, VAETileOverlap: 64,
	}
	if got != want {
		t.Errorf("release dims\n got %+v\nwant %+v", got, want)
	}
	d := m.Dims
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"video VAE encoder", float64(d.VAEEncParams), 0.18e9}, {"video VAE decoder", float64(d.VAEDecParams), 2.42e9},
		{"audio VAE", float64(d.AudioVAEParams), 0.151e9}} {
		if !within(c.got, c.want, 0.01) {
			t.Errorf("%s: %.4g params, want %.4g", c.name, c.got, c.want)
		}
	}
}

// The planner's split of the DiT (blocks and trunk) adds up to arch's
// count of the checkpoint's tensors, at release size, tiny size and a
// width of neither (hidden 96).
func TestDiTParamsMatchArch(t *testing.T) {
	rel, err := arch.Release()
	if err != nil {
		t.Fatal(err)
	}
	wide := arch.Tiny()
	wide.DiT.Hidden, wide.DiT.TimeHidden, wide.DiT.TimeDim = 96, 96, 48
	wide.DiT.AdaLNOut, wide.DiT.FinalAdaLNOut = 18*96, 2*96
	if err := wide.DiT.Check(); err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]*arch.Model{"release": rel, "tiny": arch.Tiny(), "hidden 96": wide} {
		d := DimsOf(a)
		if d.DiTParams() != a.DiT.Params() || d.Hidden != a.DiT.Hidden {
			t.Errorf("%s: planner DiT %d params at hidden %d, arch %d at %d", name, d.DiTParams(), d.Hidden, a.DiT.Params(), a.DiT.Hidden)
		}
	}
}

// Parameter and byte counts against the facts' tables (H3 facts §2, §4, §5, §12).
func TestOfficialArithmetic(t *testing.T) {
	d := mustReleaseDims(t)
	checks := []struct {
		name      string
		got, want float64
		rel       float64
	}{
		{"core per block", float64(d.CoreBlockParams()), 385.35e6, 0.001},
		{"AdaLN per block", float64(d.AdaLNBlockParams()), 260.21e6, 0.001},
		{"DiT total", float64(d.DiTParams()), 33.12e9, 0.003},
		{"DiT core", float64(int64(d.Blocks) * d.CoreBlockParams()), 19.27e9, 0.002},
		{"Qwen layer", float64(d.QLayerParams()), 487.6e6, 0.001},
		{"Qwen embedding", float64(d.QEmbedParams()), 0.78e9, 0.01},
		{"vision tower", float64(d.VisionParams()), 0.6e9, 0.05},
	}
	m, _ := LookupModel("official-bf16")
	checks = append(checks,
		struct {
			name      string
			got, want float64
			rel       float64
		}{"DiT bf16 bytes", float64(m.DiTFileBytes()), 66.2e9, 0.005},
		struct {
			name      string
			got, want float64
			rel       float64
		}{"Qwen as used, bf16", float64(m.QwenUsedBytes()), 51.5e9, 0.01},
		struct {
			name      string
			got, want float64
			rel       float64
		}{"video VAE decoder F32", float64(m.VAEDecoderBytes()), 9.68e9, 0.01},
	)
	for _, c := range checks {
		if !within(c.got, c.want, c.rel) {
			t.Errorf("%s = %.4g, want %.4g ±%.1f%%", c.name, c.got, c.want, 100*c.rel)
		}
	}
	// vpipe measured ~6.3 GB of activation scratch at 31,335 rows and
	// asked for ~6960 MB at 34,121; ComfyUI fits ~151 KB per row.
	row := float64(d.DiTRowBytes())
	if !within(row*31335, 6.3e9, 0.12) || !within(row*34121, 6960*1.048576e6, 0.12) || row < 151e3 {
		t.Errorf("DiT scratch %.0f B/row: %.2f GB at 31335 rows", row, row*31335/1e9)
	}
	// 20-step AdaLN tables ≈ 406 MB (h3.c).
	tables := float64(21 * 3 * 50 * 6 * 5376 * 4)
	if !within(tables, 406e6, 0.01) {
		t.Errorf("tables %.0f", tables)
	}
}

// FLOP counts against H3 facts §12 and h3.c's measured forward times.
func TestFLOPsAndTime(t *testing.T) {
	d := mustReleaseDims(t)
	for _, c := range []struct {
		n     int
		tflop float64
	}{{1966, 81}, {7171, 350}, {73486, 10.6e3}, {34121, 3.0e3}} {
		f := ditForward(d, c.n, 50)
		if got := (f.linear + f.attn) / 1e12; !within(got, c.tflop, 0.02) {
			t.Errorf("%d rows: %.1f TFLOP, want %.1f", c.n, got, c.tflop)
		}
	}
	l, err := layout.Build(layout.Spec{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 22, PromptTokens: 10231})
	if err != nil {
		t.Fatal(err)
	}
	if q := qwenFLOPs(d, l); !within((q.linear+q.attn)/1e15, 0.58, 0.02) {
		t.Errorf("Qwen at 10231 tokens: %.3f PFLOP, want 0.58", (q.linear+q.attn)/1e15)
	}
	vae := []struct {
		w, h, f int
		tflop   float64
	}{{512, 512, 22, 87}, {864, 480, 56, 430}, {1344, 768, 243, 3800}}
	for _, c := range vae {
		l, _ := layout.Build(layout.Spec{Canvas: layout.Canvas{Width: c.w, Height: c.h}, Frames: c.f, PromptTokens: 1})
		f := decodeFLOPs(d, l)
		if got := (f.linear + f.attn) / 1e12; !within(got, c.tflop, 0.15) {
			t.Errorf("VAE decode %dx%dx%d: %.0f TFLOP, want %.0f", c.w, c.h, c.f, got, c.tflop)
		}
	}
	// Measured forwards: h3.c M5 Max (BF16, 1.35 s at 512²x22 and 108.8 s
	// at 1344x768x124) and vpipe M4 Pro (207 s at 960x544x124).
	m5, _ := LookupMachine("m5-max-128")
	m4, _ := LookupMachine("m4-pro-64")
	for _, c := range []struct {
		mc   Machine
		rows int
		s    float64
	}{{m5, 1966, 1.35}, {m5, 37860, 108.8}, {m4, 19316, 207}} {
		if got := c.mc.seconds(ditForward(d, c.rows, 50)); !within(got, c.s, 0.3) {
			t.Errorf("%s, %d rows: %.1f s per forward, measured %.1f", c.mc.Name, c.rows, got, c.s)
		}
	}
	for _, c := range []struct{ steps, reuse, want int }{{20, 1, 20}, {20, 2, 11}, {20, 3, 8}, {50, 3, 18}} {
		if g := Forwards(c.steps, c.reuse); g != c.want {
			t.Errorf("Forwards(%d, %d) = %d, want %d", c.steps, c.reuse, g, c.want)
		}
	}
}

func TestMachines(t *testing.T) {
	for _, n := range []string{"m5-max-128", "m3-ultra-96", "m4-pro-64", "m5-max-64", "m5-air-16", "m1-air-8", "m2-ultra-192", "m1-ultra-128", "m2-max-96"} {
		if _, err := LookupMachine(n); err != nil {
			t.Error(err)
		}
	}
	m, _ := LookupMachine("m5-max-64")
	if m.Budget() != 48*gib-Reserve || m.Threadgroup != 32768 || m.GPUFamily != "apple10" {
		t.Errorf("m5-max-64: %+v", m)
	}
	if LegacyQwenLimit(m.Threadgroup) != 7936 {
		t.Errorf("legacy limit %d", LegacyQwenLimit(m.Threadgroup))
	}
	a, _ := LookupMachine("m5-air-16")
	b, _ := LookupMachine("m5-16")
	if a != b || a.Budget() != 16*gib*2/3-Reserve {
		t.Errorf("m5-air-16 %+v vs %+v", a, b)
	}
	if m.WithBudgetGB(40).Budget() != 40*gib {
		t.Error("budget override")
	}
	for _, bad := range []string{"m4-ultra-128", "m9-max-64", "m5-max-x", "fast"} {
		if _, err := LookupMachine(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	got := machineFor(96*gib, "Apple M3 Ultra")
	if got.Chip != "M3 Ultra" || got.Name != "m3-ultra-96" || !got.Detected {
		t.Errorf("detect M3 Ultra: %+v", got)
	}
	if got := machineFor(16*gib, "Apple M4"); got.Chip != "M4" {
		t.Errorf("detect M4: %+v", got)
	}
	if got := machineFor(64*gib, "Apple M7 Ultra"); got.Chip != "M3 Ultra" || got.GPUFamily == "cpu" {
		t.Errorf("detect a future Ultra: %+v", got)
	}
	if got := machineFor(64*gib, "Apple M4 Pro"); got.Chip != "M4 Pro" {
		t.Errorf("detect M4 Pro: %+v", got)
	}
	mem, err := parseMeminfo(strings.NewReader("MemFree: 1 kB\nMemTotal:       16318160 kB\n"))
	if err != nil || mem != 16318160*1024 {
		t.Errorf("meminfo %d %v", mem, err)
	}
	if _, err := Detect(nil); err != nil {
		t.Errorf("Detect: %v", err)
	}
}

func TestMeasureDir(t *testing.T) {
	dir := t.TempDir()
	m, _ := LookupModel("official-q8_0")
	files := map[string]int64{
		"FL2VA/transformer/model-00001-of-00002.safetensors":  m.DiTFileBytes() / 2,
		"FL2VA/transformer/model-00002-of-00002.safetensors":  m.DiTFileBytes() - m.DiTFileBytes()/2,
		"Ref2VA/transformer/model-00001-of-00001.safetensors": m.DiTFileBytes(),
		"FL2VA/text_encoder/model.safetensors":                66_700_000_000,
		"FL2VA/video_vae/source/model.safetensors":            10_400_000_000,
		"FL2VA/audio_vae/model.safetensors":                   560_000_000,
		"README.md":                                           100,
	}
	for p, n := range files {
		path := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(n); err != nil { // sparse: no disk used
			t.Fatal(err)
		}
		f.Close()
	}
	got, err := LookupModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.DiTBPP != bppQ8 || got.QwenBPP != bppBF16 || got.VAEBPP != bppF32 || got.AudioVAEBPP != bppF32 {
		t.Errorf("measured %+v", got)
	}
	if _, err := LookupModel(t.TempDir()); err == nil {
		t.Error("empty dir accepted")
	}
	if _, err := LookupModel("official-bf17"); err == nil {
		t.Error("unknown profile accepted")
	}
}
