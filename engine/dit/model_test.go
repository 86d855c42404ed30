package dit

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/engine/ggml/ggmltest"
	"h3studio/engine/plan"
	"h3studio/engine/sampler"
	"h3studio/engine/weights"
	"h3studio/engine/weights/safetensors"
)

// auditAll fails the test if any graph the model runs has a node
// ggml-metal would hand back to the CPU.
func auditAll(t *testing.T, m *Model) *int {
	n := new(int)
	m.Inspect = func(stage string, g *ggml.Graph) {
		*n++
		for _, f := range ggml.Audit(g) {
			t.Errorf("Metal audit, %s: %s", stage, f)
		}
	}
	return n
}

func TestMetalAudit(t *testing.T) {
	b := cpuBackend(t)
	for _, o := range []Options{{Precision: exactKV}, {}, {Precision: ggml.Precision{Weights: ggml.StoreAs(ggml.BF16)}}, {Residency: plan.Streamed}} {
		m := loadTiny(t, b, false, o)
		graphs := auditAll(t, m)
		runCase(t, m, "ref2va")
		t.Logf("options %+v: %d graphs audited", o, *graphs)
		if *graphs < 4 {
			t.Errorf("only %d graphs seen", *graphs)
		}
	}
}

// Streaming blocks through per-block weight sets must give the resident result.
func TestStreamedMatchesResident(t *testing.T) {
	b := cpuBackend(t)
	_, _, v1, a1 := runCase(t, loadTiny(t, b, false, Options{Precision: exactKV}), "fl2va")
	_, _, v2, a2 := runCase(t, loadTiny(t, b, false, Options{Precision: exactKV, Residency: plan.Streamed}), "fl2va")
	if e := relL2(v2, v1) + relL2(a2, a1); e > 1e-6 {
		t.Errorf("streamed differs from resident: %.3g", e)
	}
}

// bf16 weights (the release's storage) against the reference run in bf16,
// with the backend's own K/V type (bf16 on the CPU).
func TestParityBF16(t *testing.T) {
	b := parityBackend(t)
	m := loadTiny(t, b, false, Options{Precision: ggml.Precision{Weights: ggml.StoreAs(ggml.BF16)}})
	_, c, v, a := runCase(t, m, "t2va")
	wv, _ := c.get(t, "bf16.out.video")
	wa, _ := c.get(t, "bf16.out.audio")
	expectClose(t, "bf16 video", v, wv, ggmltest.Tol(tolBF16))
	expectClose(t, "bf16 audio", a, wa, ggmltest.Tol(tolBF16))
	fv, _ := c.get(t, "out.video")
	t.Logf("bf16 ours vs f32 reference: video rel L2 %.2e; reference bf16 vs f32: %.2e", relL2(v, fv), relL2(wv, fv))
}

// The backend's default K/V type (bf16 on the CPU, f16 on Metal) against
// the f32 reference: the attention rounding the production path pays.
func TestParityDefaultKV(t *testing.T) {
	b := parityBackend(t)
	_, c, v, a := runCase(t, loadTiny(t, b, true, Options{}), "ref2va")
	wv, _ := c.get(t, "out.video")
	wa, _ := c.get(t, "out.audio")
	expectClose(t, "video", v, wv, ggmltest.Tol(tolKV))
	expectClose(t, "audio", a, wa, ggmltest.Tol(tolKV))
}

// Three Euler forwards from noise with the sampler driving the Generation,
// against SGLang's schedule and update around the reference DiT.
func TestSamplerTrajectory(t *testing.T) {
	b := parityBackend(t)
	m := loadTiny(t, b, false, Options{Precision: parityKV()})
	f, err := safetensors.Open(filepath.Join(fixtureDir, "sampler.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &fixtureCase{f: f}
	segs, _ := segments(t, "t2va")
	seq, err := m.NewSequence(segs, nil)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := c.get(t, "traj.text")
	refined, err := m.EncodeText(text, 7)
	if err != nil {
		t.Fatal(err)
	}
	sched, _ := sampler.NewSchedule(3, sampler.DefaultVideoShift, sampler.DefaultAudioShift)
	if err := m.PrepareAdaLN(StepTimesteps(sched)); err != nil {
		t.Fatal(err)
	}
	gen, err := m.NewGeneration(seq, refined, nil, nil, [4]int{24, 2, 4, 6}, 6)
	if err != nil {
		t.Fatal(err)
	}
	video, _ := c.get(t, "traj.video.0")
	audio, _ := c.get(t, "traj.audio.0")
	step := 0
	err = sampler.Run(context.Background(), sampler.Config{Schedule: sched, Preview: func(i, _ int, v []float32) {
		step = i
		wv, _ := c.get(t, fmt.Sprintf("traj.video.%d", i))
		expectClose(t, fmt.Sprintf("step %d video", i), v, wv, ggmltest.Tol(tolF32))
	}}, gen, video, audio)
	if err != nil {
		t.Fatal(err)
	}
	wa, _ := c.get(t, "traj.audio.3")
	expectClose(t, "final audio", audio, wa, ggmltest.Tol(tolF32))
	if step != 3 {
		t.Errorf("ran %d steps", step)
	}
}

// Skipping a block (layer thinning) leaves the blocks before it exact and
// changes the output; GateScores feeds the ranking.
func TestThinning(t *testing.T) {
	b := cpuBackend(t)
	m := loadTiny(t, b, false, Options{Precision: exactKV})
	_, _, full, _ := runCase(t, m, "t2va")
	if g := m.GateScores(); len(g) != m.Cfg.Layers || g[0] <= 0 {
		t.Fatalf("gate scores %v", g)
	}
	if err := m.SetActive([]bool{true, false, true}); err != nil {
		t.Fatal(err)
	}
	taps, c, thin, _ := runCase(t, m, "t2va")
	want, _ := c.get(t, "blk.0.out")
	expectClose(t, "blk.0.out", taps["blk.0.out"], want, tolF32)
	if _, ran := taps["blk.1.out"]; ran {
		t.Error("skipped block 1 ran")
	}
	if e := relL2(thin, full); e < 1e-3 {
		t.Errorf("skipping block 1 changed the output by only %.3g", e)
	}
	if err := m.SetActive([]bool{true}); err == nil {
		t.Error("wrong-length active mask accepted")
	}
}

func TestConfigFromRepackMetadata(t *testing.T) {
	src, err := weights.OpenSafetensors(filepath.Join(fixtureDir, "weights_repack.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := ConfigFromMetadata(src.Metadata())
	if err != nil {
		t.Fatal(err)
	}
	want := tinyConfig(t)
	got.ImageModel = ""
	if fmt.Sprint(*got) != fmt.Sprint(*want) {
		t.Errorf("metadata config %+v != config.json %+v", *got, *want)
	}
	if err := Validate(want, src); err != nil {
		t.Errorf("fixture checkpoint rejected: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(fixtureDir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(raw, &m)
	mut := func(f func(map[string]any)) []byte {
		c := map[string]any{}
		for k, v := range m {
			c[k] = v
		}
		f(c)
		b, _ := json.Marshal(c)
		return b
	}
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{mut(func(c map[string]any) { delete(c, "hidden_size"); delete(c, "num_layers") }), "lacks hidden_size, num_layers"},
		{mut(func(c map[string]any) { c["rope_inv_freq_len"] = 8 }), "rotates 48 dims, more than attention_head_dim 32"},
		{mut(func(c map[string]any) { c["adaln_out_features"] = 10 }), "adaln_out_features 10"},
		{mut(func(c map[string]any) { c["patch_size"] = []int{1, 1, 1} }), "patch_size"},
		{[]byte("[1]"), "not a JSON object"},
	} {
		_, err := ParseConfig(tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error containing %q", err, tc.want)
		}
	}
}

// fakeSource reports the fixture's tensors with one removed and one misshaped.
type fakeSource struct {
	weights.Source
	drop, bend string
}

func (f fakeSource) Lookup(n string) (weights.TensorInfo, bool) {
	if n == f.drop {
		return weights.TensorInfo{}, false
	}
	t, ok := f.Source.Lookup(n)
	if n == f.bend {
		t.Shape = []int64{t.Shape[0] + 1}
	}
	return t, ok
}

func TestValidateReportsEveryMismatch(t *testing.T) {
	src, err := weights.OpenSafetensors(filepath.Join(fixtureDir, "weights.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cfg := tinyConfig(t)
	err = Validate(cfg, fakeSource{src, "blocks.2.mlp.fc2.weight", "blocks.0.norm1.weight"})
	if err == nil || !strings.Contains(err.Error(), "blocks.2.mlp.fc2.weight is missing") ||
		!strings.Contains(err.Error(), "blocks.0.norm1.weight is [49]") {
		t.Fatalf("got %v", err)
	}
	cfg.Layers = 2 // blocks.2.* now unexpected
	if err := Validate(cfg, src); err == nil || !strings.Contains(err.Error(), "blocks.2.adaln_proj.linear.bias is not expected") {
		t.Fatalf("got %v", err)
	}
	b := cpuBackend(t)
	if _, err := Load(b, src, tinyConfig(t), Options{}); err == nil || !strings.Contains(err.Error(), "QKV layout") {
		t.Errorf("load without a QKV layout: %v", err)
	}
}

func TestPatchifyRoundTrip(t *testing.T) {
	lat := make([]float32, 24*3*4*6)
	for i := range lat {
		lat[i] = float32(math.Sin(float64(i)))
	}
	rows, err := PatchifyVideo(lat, 24, 3, 4, 6)
	if err != nil {
		t.Fatal(err)
	}
	// row (t=1, y=1, x=2), channel 5, dh=1, dw=0 is latent [5, 1, 3, 4]
	if got, want := rows[((1*2+1)*3+2)*96+5*4+2], lat[((5*3+1)*4+3)*6+4]; got != want {
		t.Errorf("patch element %v, latent %v", got, want)
	}
	back, _ := UnpatchifyVideo(rows, 24, 3, 4, 6)
	a := make([]float32, 32*2*5)
	for i := range a {
		a[i] = float32(i)
	}
	ar, _ := PackAudio(a, 32, 5)
	if ar[32*6+3] != a[(3*2+1)*5+1] { // right channel, t=1, channel 3
		t.Error("audio rows not left-then-right")
	}
	ab, _ := UnpackAudio(ar, 32, 5)
	if relL2(back, lat) != 0 || relL2(ab, a) != 0 {
		t.Error("round trip changed values")
	}
	if _, err := PatchifyVideo(lat, 24, 3, 5, 6); err == nil {
		t.Error("odd height accepted")
	}
}

// Q8_0 matrices (where the row length allows: out_proj and fc2 at this
// config) against the f32 reference; ggml also rounds the activations of
// those products to q8_0.
func TestParityQ8(t *testing.T) {
	b := parityBackend(t)
	m := loadTiny(t, b, false, Options{Precision: ggml.Precision{Weights: ggml.StoreAs(ggml.Q8_0), KV: parityKV().KV}})
	graphs := auditAll(t, m)
	_, c, v, a := runCase(t, m, "fl2va")
	wv, _ := c.get(t, "out.video")
	wa, _ := c.get(t, "out.audio")
	expectClose(t, "q8_0 video", v, wv, ggmltest.Tol(tolQ8))
	expectClose(t, "q8_0 audio", a, wa, ggmltest.Tol(tolQ8))
	if *graphs == 0 {
		t.Error("no graph audited")
	}
	if got := m.blocks[0].FC2.DType(); got != ggml.Q8_0 {
		t.Errorf("fc2 stored as %s", got)
	}
}

func TestInferConfig(t *testing.T) {
	src, err := weights.OpenSafetensors(filepath.Join(fixtureDir, "weights.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	got, err := ConfigFor(src, nil) // no config.json, no metadata: shapes
	if err != nil {
		t.Fatal(err)
	}
	want := tinyConfig(t)
	want.ClassName = ""
	if fmt.Sprint(*got) != fmt.Sprint(*want) {
		t.Errorf("inferred %+v\nconfig.json %+v", *got, *want)
	}
	if _, err := InferConfig(fakeSource{src, "rope.inv_freq", ""}); err == nil || !strings.Contains(err.Error(), "lacks rope.inv_freq") {
		t.Errorf("got %v", err)
	}
}

// bf16 modulation tables: the rounding of shift, scale and gate only.
func TestAdaLNTablesBF16(t *testing.T) {
	b := cpuBackend(t)
	m := loadTiny(t, b, false, Options{Precision: exactKV, AdaLNType: ggml.BF16})
	auditAll(t, m)
	_, c, v, _ := runCase(t, m, "ref2va")
	wv, _ := c.get(t, "out.video")
	expectClose(t, "bf16 tables", v, wv, tolKV)
}

// PinnedRows lays the conditions of the Ref2VA case out in sequence order,
// each augmented with the official draw: the prefix of a [24, T + n, h, w]
// draw (T the target's latent frames, n the visual conditions).
func TestPinnedRows(t *testing.T) {
	b := cpuBackend(t)
	m := loadTiny(t, b, false, Options{Precision: exactKV})
	c := openCase(t, "ref2va")
	segs, _ := segments(t, "ref2va")
	s, err := m.NewSequence(segs, nil)
	if err != nil {
		t.Fatal(err)
	}
	img, _ := c.get(t, "in.cond_video.0")
	vid, _ := c.get(t, "in.cond_video.1")
	a0, _ := c.get(t, "in.cond_audio.0")
	a1, _ := c.get(t, "in.cond_audio.1")
	const targetT = 3
	draws := 0
	draw := func(n int) []float32 { draws++; return sampler.TorchNormal(1234, n) }
	v, a, err := m.PinnedRows(s, [][]float32{img, vid}, [][]float32{a0, a1}, targetT, draw)
	if err != nil {
		t.Fatal(err)
	}
	if draws != 2 {
		t.Errorf("%d noise draws, want one per visual condition (2)", draws)
	}
	wantA, _ := c.get(t, "cond.audio_rows")
	expectClose(t, "reference audio rows", a, wantA, 0)
	clean, _ := PatchifyVideo(img, 24, 1, 4, 6)
	full := sampler.TorchNormal(1234, 24*(targetT+2)*4*6)
	prefix := make([]float32, 0, 24*4*6) // the image's one latent frame of each channel
	for ch := 0; ch < 24; ch++ {
		prefix = append(prefix, full[ch*(targetT+2)*24:ch*(targetT+2)*24+24]...)
	}
	noise, _ := PatchifyVideo(prefix, 24, 1, 4, 6)
	for i := range clean {
		if want := float32(0.999)*clean[i] + float32(1-0.999)*noise[i]; v[i] != want {
			t.Fatalf("row value %d: %v, want %v", i, v[i], want)
		}
	}
	if len(v) != (6+4)*96 {
		t.Errorf("%d condition video values", len(v))
	}
	if _, _, err := m.PinnedRows(s, [][]float32{img}, [][]float32{a0, a1}, targetT, draw); err == nil {
		t.Error("missing clip latent accepted")
	}
	if _, _, err := m.PinnedRows(s, [][]float32{img, img}, [][]float32{a0, a1}, targetT, draw); err == nil {
		t.Error("misshaped clip latent accepted")
	}
}
