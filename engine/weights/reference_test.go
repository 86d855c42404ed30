package weights_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"h3studio/engine/tokenizer"
	"h3studio/engine/vae"
	"h3studio/engine/weights"
	"h3studio/engine/weights/safetensors"
)

// The files under testdata/ref come from tools/fixtures/weights/gen.py,
// run with the safetensors, transformers and tokenizers packages on the
// tiny snapshot of seed 1 (see testdata/ref/gen.log).

type refCheck struct {
	Missing    []string              `json:"text_encoder_missing"`
	Unexpected []string              `json:"text_encoder_unexpected"`
	Mismatch   []string              `json:"text_encoder_shape_mismatch"`
	Sums       map[string][2]float64 `json:"tensor_sums"`
	TokIDs     map[string][]int      `json:"tokenizers_ids"`
}

func loadCheck(t *testing.T) refCheck {
	raw, err := os.ReadFile(filepath.Join("testdata", "ref", "tiny_check.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c refCheck
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestReadSafetensorsWrittenByReference(t *testing.T) {
	f, err := safetensors.Open(filepath.Join("testdata", "ref", "ref.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	raw, err := os.ReadFile(filepath.Join("testdata", "ref", "ref_values.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]struct {
		DType  string    `json:"dtype"`
		Shape  []int64   `json:"shape"`
		Values []float64 `json:"values"`
	}
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if f.Metadata["note"] != "reference" || len(f.Names()) != len(want) {
		t.Fatalf("metadata %v, %d tensors, want %d", f.Metadata, len(f.Names()), len(want))
	}
	for name, w := range want {
		tn, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("tensor %s missing", name)
		}
		if len(tn.Shape) != len(w.Shape) {
			t.Fatalf("%s: shape %v, want %v", name, tn.Shape, w.Shape)
		}
		var got []float64
		switch tn.DType {
		case safetensors.I64:
			for i := 0; i < len(tn.Data); i += 8 {
				got = append(got, float64(int64(leU64(tn.Data[i:]))))
			}
		case safetensors.U8:
			for _, b := range tn.Data {
				got = append(got, float64(b))
			}
		case safetensors.F64:
			for i := 0; i < len(tn.Data); i += 8 {
				got = append(got, math.Float64frombits(leU64(tn.Data[i:])))
			}
		default:
			v, err := tn.Float32()
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range v {
				got = append(got, float64(x))
			}
		}
		if len(got) != len(w.Values) {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(w.Values))
		}
		for i := range got {
			if got[i] != w.Values[i] {
				t.Fatalf("%s[%d] = %v, want %v (%s)", name, i, got[i], w.Values[i], w.DType)
			}
		}
	}
}

func leU64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// TestTinyMatchesReference regenerates the seed-1 tiny snapshot and checks
// that every tensor read through our reader (from 8-mod-16 shards) sums to
// what the safetensors package read from the committed run's snapshot, and
// that Hugging Face found the text encoder's names and shapes exact.
func TestTinyMatchesReference(t *testing.T) {
	c := loadCheck(t)
	if len(c.Missing)+len(c.Unexpected)+len(c.Mismatch) != 0 {
		t.Fatalf("HF Qwen3-VL disagreed with the tiny text encoder: missing %v unexpected %v mismatched %v", c.Missing, c.Unexpected, c.Mismatch)
	}
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := weights.WriteTiny(dir, weights.TinyOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	snap, err := weights.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := snap.Partitions[0]
	seen := 0
	for _, comp := range []struct{ name, key string }{
		{weights.Transformer, "transformer"}, {weights.TextEncoder, "text_encoder"},
		{weights.VideoVAE, "video_vae/source"}, {weights.AudioVAE, "audio_vae"},
	} {
		src, err := p.Component(comp.name).Open()
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range src.Tensors() {
			want, ok := c.Sums[comp.key+"/"+ti.Name]
			if !ok {
				t.Errorf("%s/%s: not in the reference run", comp.key, ti.Name)
				continue
			}
			v, err := weights.Float32(src, ti.Name)
			if err != nil {
				t.Fatal(err)
			}
			var s, a float64
			for _, x := range v {
				s += float64(x)
				a += math.Abs(float64(x))
			}
			if math.Abs(s-want[0]) > 1e-9*math.Max(1, want[1]) || math.Abs(a-want[1]) > 1e-9*math.Max(1, want[1]) {
				t.Errorf("%s/%s: sums %v %v, reference %v", comp.key, ti.Name, s, a, want)
			}
			seen++
		}
		src.Close()
	}
	if seen != len(c.Sums) {
		t.Errorf("compared %d tensors, reference has %d", seen, len(c.Sums))
	}
	t.Logf("%d tensors equal to the safetensors package's reading", seen)
}

// TestTinyTokenizerMatchesHF encodes the probe strings with the tiny
// tokenizer.json through engine/tokenizer and compares with HF tokenizers.
func TestTinyTokenizerMatchesHF(t *testing.T) {
	c := loadCheck(t)
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := weights.WriteTiny(dir, weights.TinyOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	tok, err := tokenizer.Load(filepath.Join(dir, "FL2VA", "tokenizer", "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range c.TokIDs {
		got := tok.Encode(text)
		if len(got) != len(want) {
			t.Errorf("%q: %v, HF %v", text, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q: %v, HF %v", text, got, want)
				break
			}
		}
	}
}

// TestTinyVAEConfigsParse reads the tiny VAE configs with engine/vae's
// parsers, which implement the release's keys, with no bridging.
func TestTinyVAEConfigsParse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := weights.WriteTiny(dir, weights.TinyOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := vae.ReadVideoConfig(filepath.Join(dir, "FL2VA", "video_vae", "source", "config.json")); err != nil {
		t.Error(err)
	}
	if _, err := vae.ReadAudioConfig(filepath.Join(dir, "FL2VA", "audio_vae", "config.json")); err != nil {
		t.Error(err)
	}
}

// nameSet lists tensor names with every block index replaced by N.
func nameSet(t *testing.T, paths ...string) map[string]bool {
	re := regexp.MustCompile(`\.\d+\.`)
	out := map[string]bool{}
	for _, p := range paths {
		f, err := safetensors.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range f.Tensors {
			out[re.ReplaceAllString(ti.Name, ".N.")] = true
		}
		f.Close()
	}
	return out
}

// TestTinyNamesMatchReferenceStateDicts compares the tiny DiT and VAE
// tensor names with the state dicts of the reference modules (ComfyUI's
// MiniMaxH3Model, MiniMaxH3VideoVAE and the audio VAE) that the dit and
// vae parity generators under tools/fixtures saved.
func TestTinyNamesMatchReferenceStateDicts(t *testing.T) {
	fx := filepath.Join("..", "..", "tools", "fixtures")
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := weights.WriteTiny(dir, weights.TinyOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "FL2VA")
	cases := []struct {
		name      string
		reference []string
		tiny      []string
	}{
		{"transformer", []string{filepath.Join(fx, "dit", "testdata", "weights.safetensors")},
			[]string{filepath.Join(p, "transformer", "model-00001-of-00002.safetensors"), filepath.Join(p, "transformer", "model-00002-of-00002.safetensors")}},
		{"video_vae", []string{filepath.Join(fx, "vae", "video_weights_encoder.safetensors"), filepath.Join(fx, "vae", "video_weights_decoder.safetensors")},
			[]string{filepath.Join(p, "video_vae", "source", "model.safetensors")}},
		{"audio_vae", []string{filepath.Join(fx, "vae", "audio_weights_encoder.safetensors"), filepath.Join(fx, "vae", "audio_weights_decoder.safetensors")},
			[]string{filepath.Join(p, "audio_vae", "model.safetensors")}},
	}
	for _, c := range cases {
		for _, r := range c.reference {
			if _, err := os.Stat(r); err != nil {
				t.Skipf("reference fixture %s is not in this checkout", r)
			}
		}
		ref, tiny := nameSet(t, c.reference...), nameSet(t, c.tiny...)
		for n := range ref {
			if !tiny[n] {
				t.Errorf("%s: reference has %s, the tiny snapshot does not", c.name, n)
			}
		}
		for n := range tiny {
			if !ref[n] {
				t.Errorf("%s: tiny snapshot has %s, the reference does not", c.name, n)
			}
		}
		t.Logf("%s: %d name patterns agree", c.name, len(ref))
	}
}
