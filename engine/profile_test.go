package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"h3studio/engine/weights"
)

// readJSON decodes one of a snapshot's config files into a generic map, so
// the test reads the written numbers without the parser under test.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func num(t *testing.T, m map[string]any, keys ...string) int {
	t.Helper()
	for _, k := range keys[:len(keys)-1] {
		m = m[k].(map[string]any)
	}
	v, ok := m[keys[len(keys)-1]].(float64)
	if !ok {
		t.Fatalf("config has no number %v", keys)
	}
	return int(v)
}

func writeTiny(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := weights.WriteTiny(dir, weights.TinyOptions{Seed: TinySeed}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The embedded tiny model is planned from the configs it was written with.
func TestProfileOfTinyModel(t *testing.T) {
	dir := writeTiny(t)
	e, err := Open(dir, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	d := e.Profile().Dims
	tr := readJSON(t, filepath.Join(dir, "FL2VA", "transformer", "config.json"))
	te := readJSON(t, filepath.Join(dir, "FL2VA", "text_encoder", "config.json"))
	vs := readJSON(t, filepath.Join(dir, "FL2VA", "video_vae", "source", "config.json"))
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"hidden", d.Hidden, num(t, tr, "hidden_size")},
		{"blocks", d.Blocks, num(t, tr, "num_layers")},
		{"heads", d.Heads, num(t, tr, "num_attention_heads")},
		{"ffn", d.FFN, num(t, tr, "ffn_hidden_size")},
		{"time embed", d.TimeEmbed, num(t, tr, "time_embed_dim")},
		{"Qwen hidden", d.QHidden, num(t, te, "text_config", "hidden_size")},
		{"Qwen layers", d.QLayers, num(t, te, "text_config", "num_hidden_layers")},
		{"Qwen vocab", d.QVocab, num(t, te, "text_config", "vocab_size")},
		{"vision layers", d.VLayers, num(t, te, "vision_config", "depth")},
		{"decoder blocks", d.DecBlocks, num(t, vs, "vit_decoder_kwargs", "num_layers")},
		{"decoder dim", d.DecDim, num(t, vs, "vit_decoder_kwargs", "heads") * num(t, vs, "vit_decoder_kwargs", "dim_head")},
	} {
		if c.got != c.want {
			t.Errorf("tiny profile %s = %d, the written config says %d", c.name, c.got, c.want)
		}
	}
	if m := e.Profile(); m.DiTBPP < 2 || m.DiTBPP > 4 || m.VAEBPP != 4 {
		t.Errorf("measured bytes per parameter: DiT %.3f, video VAE %.3f (the files are BF16 with F32 islands, and F32)", m.DiTBPP, m.VAEBPP)
	}
}

// A checkpoint of neither release nor tiny size is planned at its own width.
func TestProfileOfOtherWidth(t *testing.T) {
	dir := writeTiny(t)
	for _, p := range []string{"FL2VA", "Ref2VA"} {
		path := filepath.Join(dir, p, "transformer", "config.json")
		c := readJSON(t, path)
		c["hidden_size"], c["time_embed_hidden_size"], c["time_embed_dim"] = 96, 96, 48
		c["adaln_out_features"], c["final_adaln_out_features"] = 18*96, 2*96
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e, err := Open(dir, Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if d := e.Profile().Dims; d.Hidden != 96 || d.TimeEmbed != 48 || d.Blocks != 2 {
		t.Errorf("hidden-96 checkpoint planned at hidden %d, time embed %d, %d blocks", d.Hidden, d.TimeEmbed, d.Blocks)
	}
}
