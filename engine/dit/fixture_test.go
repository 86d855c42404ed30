package dit

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/engine/ggml/ggmltest"
	"h3studio/engine/layout"
	"h3studio/engine/weights"
	"h3studio/engine/weights/safetensors"
)

// Fixtures: tools/fixtures/dit/gen.py ran ComfyUI's MiniMax-H3 DiT
// (comfy/ldm/minimax/model.py) at a tiny config on the device machine.
var fixtureDir = filepath.Join("..", "..", "tools", "fixtures", "dit", "testdata")

// Named tolerances (relative L2 per tensor).
const (
	tolF32  = 1e-4 // f32 weights, f32 K/V: only summation order differs
	tolBF16 = 1e-2 // bf16 weights against the reference run in bf16
	tolKV   = 1e-3 // f32 weights, the backend's bf16/f16 K/V: attention rounding only
	tolQ8   = 1e-2 // q8_0 weights and q8_0-rounded activations in those products
)

type caseMeta struct {
	Task       string           `json:"task"`
	Digest     string           `json:"weights_fnv64"`
	SigmaVideo float64          `json:"sigma_video"`
	TVideo     float64          `json:"t_video"`
	TAudio     float64          `json:"t_audio"`
	SeqLen     int              `json:"seq_len"`
	Segments   [][3]any         `json:"segments"`
	Tags       []int            `json:"text_token_tags"`
	Keyframes  []int            `json:"keyframes"`
	Refs       []map[string]any `json:"refs"`
	Aug        float64          `json:"visual_cond_noise_aug"`
}

type fixtureCase struct {
	meta caseMeta
	f    *safetensors.File
}

func openCase(t *testing.T, name string) *fixtureCase {
	t.Helper()
	f, err := safetensors.Open(filepath.Join(fixtureDir, name+".safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	c := &fixtureCase{f: f}
	if err := json.Unmarshal([]byte(f.Metadata["case"]), &c.meta); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *fixtureCase) get(t *testing.T, name string) ([]float32, []int64) {
	t.Helper()
	x, ok := c.f.Tensor(name)
	if !ok {
		t.Fatalf("fixture lacks %s", name)
	}
	v, err := x.Float32()
	if err != nil {
		t.Fatal(err)
	}
	return v, x.Shape
}

func (c *fixtureCase) has(name string) bool { _, ok := c.f.Tensor(name); return ok }

// relL2 is ||a-b|| / ||b||.
func relL2(a, b []float32) float64 {
	var d, n float64
	for i := range b {
		e := float64(a[i]) - float64(b[i])
		d += e * e
		n += float64(b[i]) * float64(b[i])
	}
	return math.Sqrt(d / n)
}

func expectClose(t *testing.T, what string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d values, reference %d", what, len(got), len(want))
		return
	}
	e := relL2(got, want)
	t.Logf("%-14s rel L2 %.2e (%d values)", what, e, len(want))
	if !(e <= tol) {
		t.Errorf("%s: relative L2 %.3g > %g", what, e, tol)
	}
}

// tinyConfig reads the fixture's transformer/config.json.
func tinyConfig(t *testing.T) *Config {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(fixtureDir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ParseConfig(raw)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// parityBackend runs the fixture parity tests: on the CPU, or on Metal
// under make mac-test, where a node placed on the CPU fails the test and
// the tolerances are ggmltest.Tol's. f32 K/V (exactKV) is a CPU-only
// reference mode, so those tests use the backend's K/V type on Metal.
func parityBackend(t *testing.T) *ggml.Backend {
	return ggmltest.Backend(t, ggmltest.Options{Threads: 2})
}

// exactKV keeps attention K/V in f32, the reference precision.
var exactKV = ggml.Precision{KV: ggml.StoreAs(ggml.F32)}

// parityKV is exactKV on the CPU and the backend's K/V type on Metal.
func parityKV() ggml.Precision {
	if ggmltest.Metal {
		return ggml.Precision{}
	}
	return exactKV
}

func cpuBackend(t *testing.T) *ggml.Backend {
	t.Helper()
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU, Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// loadTiny opens weights.safetensors (interleaved) or weights_repack (flat).
func loadTiny(t *testing.T, b *ggml.Backend, repack bool, o Options) *Model {
	t.Helper()
	file := "weights.safetensors"
	o.QKV = weights.QKVInterleaved
	if repack {
		file, o.QKV = "weights_repack.safetensors", weights.QKVFlat
	}
	src, err := weights.OpenSafetensors(filepath.Join(fixtureDir, file))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	m, err := Load(b, src, tinyConfig(t), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m
}

// canvasOf is the pixel canvas of a latent grid.
func canvasOf(lh, lw int) layout.Canvas { return layout.Canvas{Width: lw * 16, Height: lh * 16} }

// wExtremes are the first and last w coordinates of a latent grid (the
// reference's linspace(endpoint=False) over an area-normalised box).
func wExtremes(lh, lw int) (float64, float64) {
	ratio := float64(lw) / math.Sqrt(float64(lh*lw))
	n := lw / 2
	at := func(i int) float64 { return 32 * ((1-ratio)/2 + float64(i)*ratio/float64(n)) }
	return at(0), at(n - 1)
}

type segBuilder struct{ segs []layout.Segment }

func (b *segBuilder) add(s layout.Segment) {
	if n := len(b.segs); n > 0 {
		s.Start = b.segs[n-1].Start + b.segs[n-1].Rows
	}
	b.segs = append(b.segs, s)
}

func (b *segBuilder) video(kind layout.SegmentKind, role layout.TimestepRole, t0 float64, lt, lh, lw int) {
	b.add(layout.Segment{Kind: kind, Ref: -1, Rows: lt * lh / 2 * lw / 2, Timestep: role, Modality: layout.ModalityVideo,
		T0: t0, LatentT: lt, Canvas: canvasOf(lh, lw), GridH: lh / 2, GridW: lw / 2, Pinned: role == layout.TimestepVisualCond})
}

func (b *segBuilder) audio(kind layout.SegmentKind, role layout.TimestepRole, t0 float64, ta, lh, lw int) {
	lo, hi := wExtremes(lh, lw)
	b.add(layout.Segment{Kind: kind, Ref: -1, Rows: 2 * ta, Timestep: role, Modality: layout.ModalityAudio,
		T0: t0, AudioT: ta, Canvas: canvasOf(lh, lw), GridH: lh / 2, GridW: lw / 2, WLow: lo, WHigh: hi,
		Pinned: role == layout.TimestepAudioCond})
}

// segments rebuilds each fixture case's layout the way the release places
// rows (the test then checks the positions against the reference's).
func segments(t *testing.T, name string) ([]layout.Segment, []layout.Modality) {
	var b segBuilder
	var tags []layout.Modality
	text := func(n int) {
		b.add(layout.Segment{Kind: layout.SegText, Ref: -1, Rows: n, Timestep: layout.TimestepVideo, Modality: layout.ModalityText})
	}
	switch strings.TrimPrefix(name, "tiny_") {
	case "t2va":
		text(7)
		b.audio(layout.SegAudio, layout.TimestepAudio, 7, 6, 4, 6)
		b.video(layout.SegVideo, layout.TimestepVideo, 7, 2, 4, 6)
	case "fl2va":
		text(9)
		for _, v := range []int{1, 1, 0, 0, 0, 0, 1, 1, 1} {
			tags = append(tags, layout.Modality(v))
		}
		b.video(layout.SegAnchor, layout.TimestepVisualCond, 9, 1, 4, 4)
		b.video(layout.SegAnchor, layout.TimestepVisualCond, 9+layout.SpanSum(7)-5.0/3, 1, 4, 4)
		b.audio(layout.SegAudio, layout.TimestepAudio, 9, 37, 4, 4)
		b.video(layout.SegVideo, layout.TimestepVideo, 9, 7, 4, 4)
	case "ref2va":
		text(6)
		cur := 6.0
		b.video(layout.SegRefImage, layout.TimestepVisualCond, cur, 1, 4, 6)
		cur++
		b.audio(layout.SegRefAudio, layout.TimestepAudioCond, cur, 4, 2, 4)
		b.video(layout.SegRefVideo, layout.TimestepVisualCond, cur, 2, 2, 4)
		cur += math.Max(4, layout.SpanSum(2))
		b.audio(layout.SegRefAudio, layout.TimestepAudioCond, cur, 3, 4, 4)
		cur += 3
		b.audio(layout.SegAudio, layout.TimestepAudio, cur, 5, 4, 4)
		b.video(layout.SegVideo, layout.TimestepVideo, cur, 2, 4, 4)
	default:
		t.Fatalf("no layout for %s", name)
	}
	return b.segs, tags
}

// inputs assembles a case's rows: pinned conditions (augmented with the
// reference's own noise draws) then the target latents.
func inputs(t *testing.T, m *Model, c *fixtureCase, s *Sequence) (video, audio []float32, vshape, ashape []int64) {
	cfg := m.Cfg
	for i := 0; c.has(nameN("in.cond_video.", i)); i++ {
		lat, sh := c.get(t, nameN("in.cond_video.", i))
		// ComfyUI draws its augmentation noise in row shape; ConditionRows
		// takes the official latent-shaped draw, so unpatchify it first.
		noiseRows, _ := c.get(t, nameN("in.cond_noise.", i))
		noise, err := UnpatchifyVideo(noiseRows, int(sh[0]), int(sh[1]), int(sh[2]), int(sh[3]))
		if err != nil {
			t.Fatal(err)
		}
		rows, err := ConditionRows(lat, int(sh[0]), int(sh[1]), int(sh[2]), int(sh[3]), noise, c.meta.Aug)
		if err != nil {
			t.Fatal(err)
		}
		video = append(video, rows...)
	}
	if len(video) > 0 {
		want, _ := c.get(t, "cond.video_rows")
		expectClose(t, "cond rows", video, want, 1e-7)
	}
	for i := 0; c.has(nameN("in.cond_audio.", i)); i++ {
		lat, sh := c.get(t, nameN("in.cond_audio.", i))
		rows, err := PackAudio(lat, int(sh[0]), int(sh[2]))
		if err != nil {
			t.Fatal(err)
		}
		audio = append(audio, rows...)
	}
	lat, vshape := c.get(t, "in.video")
	rows, err := PatchifyVideo(lat, int(vshape[0]), int(vshape[1]), int(vshape[2]), int(vshape[3]))
	if err != nil {
		t.Fatal(err)
	}
	video = append(video, rows...)
	alat, ashape := c.get(t, "in.audio")
	arows, err := PackAudio(alat, cfg.AudioChannels, int(ashape[2]))
	if err != nil {
		t.Fatal(err)
	}
	audio = append(audio, arows...)
	return video, audio, vshape, ashape
}

func nameN(p string, i int) string { return p + string(rune('0'+i)) }

// runCase runs one fixture case and returns the taps and the velocities
// (unpatchified to the reference's latent shapes).
func runCase(t *testing.T, m *Model, name string) (map[string][]float32, *fixtureCase, []float32, []float32) {
	c := openCase(t, name)
	segs, tags := segments(t, name)
	s, err := m.NewSequence(segs, tags)
	if err != nil {
		t.Fatal(err)
	}
	if s.Rows() != c.meta.SeqLen {
		t.Fatalf("%s: %d rows, reference %d", name, s.Rows(), c.meta.SeqLen)
	}
	var pos []float32
	for i := range segs {
		for _, p := range segs[i].AppendPositions(nil) {
			pos = append(pos, float32(p[0]), float32(p[1]), float32(p[2]))
		}
	}
	want, _ := c.get(t, "layout.positions")
	expectClose(t, "positions", pos, want, 1e-7)

	taps := map[string][]float32{}
	m.Tap = func(n string, _ []int, d []float32) { taps[n] = d }
	defer func() { m.Tap = nil }()
	text, tshape := c.get(t, "in.text")
	refined, err := m.EncodeText(text, int(tshape[0]))
	if err != nil {
		t.Fatal(err)
	}
	ts := Timesteps{Video: c.meta.TVideo, Audio: c.meta.TAudio}
	if err := m.PrepareAdaLN([]Timesteps{ts}); err != nil {
		t.Fatal(err)
	}
	video, audio, vs, as := inputs(t, m, c, s)
	out, err := m.Forward(s, Inputs{Text: refined, Video: video, Audio: audio, T: ts})
	if err != nil {
		t.Fatal(err)
	}
	v, err := UnpatchifyVideo(out.Video, int(vs[0]), int(vs[1]), int(vs[2]), int(vs[3]))
	if err != nil {
		t.Fatal(err)
	}
	a, err := UnpackAudio(out.Audio, int(as[0]), int(as[2]))
	if err != nil {
		t.Fatal(err)
	}
	return taps, c, v, a
}

// referenceTimesteps is ComfyUI's sorted unique_t for a case.
func referenceTimesteps(c *fixtureCase) []float64 {
	set := map[float64]bool{c.meta.TVideo: true, c.meta.TAudio: true}
	if c.has("cond.video_rows") {
		set[math.Max(c.meta.TVideo, VisualCondTimestep)] = true
	}
	if c.has("cond.audio_rows") {
		set[math.Max(c.meta.TAudio, AudioCondTimestep)] = true
	}
	var out []float64
	for v := range set {
		out = append(out, v)
	}
	sort.Float64s(out)
	return out
}

// checkCase compares every tap and output with the reference.
func checkCase(t *testing.T, m *Model, name string, tol float64) {
	taps, c, v, a := runCase(t, m, name)
	cfg := m.Cfg
	for _, n := range []string{"text.proj", "refiner.out", "blk.in", "final.video", "final.audio"} {
		want, _ := c.get(t, n)
		expectClose(t, n, taps[n], want, tol)
	}
	for i := 0; i < cfg.Layers; i++ {
		for _, n := range []string{nameN("blk.", i) + ".attn", nameN("blk.", i) + ".out"} {
			want, _ := c.get(t, n)
			expectClose(t, n, taps[n], want, tol)
		}
	}
	// t_emb and block 0's AdaLN output, matched by timestep value.
	ours := m.ada.ts
	temb, _ := c.get(t, "t_emb")
	mod, _ := c.get(t, "blk.0.mod") // [6, M·3, H]
	td, h := cfg.TimeDim, cfg.Hidden
	var gotE, wantE, gotM, wantM []float32
	refT := referenceTimesteps(c)
	for mi, tv := range refT {
		j := sort.SearchFloat64s(ours, tv)
		gotE = append(gotE, taps["t_emb"][j*td:(j+1)*td]...)
		wantE = append(wantE, temb[mi*td:(mi+1)*td]...)
		for tag := 0; tag < Modalities; tag++ {
			for slot := 0; slot < adaSlots; slot++ {
				off := j*adaSlots*Modalities*h + (tag*adaSlots+slot)*h
				gotM = append(gotM, taps["blk.0.adaln"][off:off+h]...)
				ro := (slot*len(refT)*Modalities + mi*Modalities + tag) * h
				wantM = append(wantM, mod[ro:ro+h]...)
			}
		}
	}
	expectClose(t, "t_emb", gotE, wantE, tol)
	expectClose(t, "blk.0.adaln", gotM, wantM, tol)
	wv, _ := c.get(t, "out.video")
	wa, _ := c.get(t, "out.audio")
	expectClose(t, "out.video", v, wv, tol)
	expectClose(t, "out.audio", a, wa, tol)
}

func TestParityF32(t *testing.T) {
	b := parityBackend(t)
	for _, repack := range []bool{false, true} {
		m := loadTiny(t, b, repack, Options{Precision: parityKV()})
		for _, name := range []string{"t2va", "fl2va", "ref2va"} {
			t.Run(name+map[bool]string{false: "/interleaved", true: "/flat"}[repack], func(t *testing.T) {
				checkCase(t, m, name, ggmltest.Tol(tolF32))
			})
		}
	}
}
