package dit

import (
	"fmt"
	"hash/fnv"
	"os"
	"testing"

	"h3studio/engine/ggml"
	"h3studio/engine/ggml/ggmltest"
	"h3studio/engine/plan"
	"h3studio/engine/weights"
)

// tinySnapshot writes engine/weights' tiny snapshot (seed 1, as gen.py
// --tiny used) and opens its FL2VA transformer the way the app does:
// discovery, recorded QKV layout, config.json.
func tinySnapshot(t *testing.T, aligned bool) (weights.Source, *Config, weights.QKVLayout) {
	t.Helper()
	dir := t.TempDir() + "/tiny"
	if err := weights.WriteTiny(dir, weights.TinyOptions{Seed: 1, Aligned16: aligned}); err != nil {
		t.Fatal(err)
	}
	snap, err := weights.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	var comp *weights.Component
	for _, p := range snap.Partitions {
		if p.Name == "fl2va" {
			comp = p.Component(weights.Transformer)
		}
	}
	if comp == nil {
		t.Fatal("tiny snapshot has no fl2va transformer")
	}
	src, err := comp.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	raw, err := os.ReadFile(comp.Config)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ConfigFor(src, raw)
	if err != nil {
		t.Fatal(err)
	}
	return src, cfg, comp.QKV
}

// digest is gen.py's weights_fnv64: FNV-1a 64 over name and stored bytes.
func digest(src weights.Source) string {
	h := fnv.New64a()
	for _, ti := range src.Tensors() {
		d, _ := src.Data(ti.Name)
		h.Write([]byte(ti.Name))
		h.Write(d)
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// The reference DiT run on the tiny snapshot's own weights (gen.py --tiny):
// exact in f32, and the stored bf16 weights against the reference's bf16 run.
func TestParityTinySnapshot(t *testing.T) {
	b := parityBackend(t)
	src, cfg, qkv := tinySnapshot(t, false)
	if qkv != weights.QKVInterleaved {
		t.Fatalf("official-layout tiny snapshot recorded as %s", qkv)
	}
	if got, want := digest(src), openCase(t, "tiny_t2va").meta.Digest; got != want {
		t.Fatalf("the tiny snapshot's DiT weights changed (digest %s, fixtures made from %s): regenerate tools/fixtures/dit with gen.py --tiny", got, want)
	}
	m, err := Load(b, src, cfg, Options{QKV: qkv, Precision: ggml.Precision{Weights: ggml.StoreAs(ggml.F32), KV: parityKV().KV}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	auditAll(t, m)
	for _, name := range []string{"tiny_t2va", "tiny_fl2va", "tiny_ref2va"} {
		t.Run(name, func(t *testing.T) { checkCase(t, m, name, ggmltest.Tol(tolF32)) })
	}
	stored, err := Load(b, src, cfg, Options{QKV: qkv})
	if err != nil {
		t.Fatal(err)
	}
	defer stored.Close()
	_, c, v, a := runCase(t, stored, "tiny_t2va")
	wv, _ := c.get(t, "bf16.out.video")
	wa, _ := c.get(t, "bf16.out.audio")
	expectClose(t, "bf16 video", v, wv, ggmltest.Tol(tolBF16))
	expectClose(t, "bf16 audio", a, wa, ggmltest.Tol(tolBF16))
}

// With 16-byte aligned shards the bf16 matrices are placed zero-copy over
// the mapping; the results are the copied ones, bit for bit.
func TestTinySnapshotMapped(t *testing.T) {
	b := cpuBackend(t)
	src, cfg, qkv := tinySnapshot(t, true)
	m, err := Load(b, src, cfg, Options{QKV: qkv})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	mapped, copied := m.Placement()
	t.Logf("placed %d bytes zero-copy, copied %d", mapped, copied)
	if b.Caps().ZeroCopy && mapped == 0 {
		t.Error("nothing was mapped from an aligned snapshot")
	}
	_, _, v1, a1 := runCase(t, m, "tiny_fl2va")
	src2, _, _ := tinySnapshot(t, false)
	m2, err := Load(b, src2, cfg, Options{QKV: qkv, Residency: plan.Streamed})
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Close()
	_, _, v2, a2 := runCase(t, m2, "tiny_fl2va")
	if relL2(v2, v1) != 0 || relL2(a2, a1) != 0 {
		t.Errorf("mapped resident and streamed copies differ: %.3g %.3g", relL2(v2, v1), relL2(a2, a1))
	}
}
