package weights

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
	"h3studio/engine/weights/gguf"
	"h3studio/engine/weights/safetensors"
)

// writeRepackDiT writes a one-tensor stand-in for a Comfy-Org DiT file
// with the given __metadata__.
func writeRepackDiT(t *testing.T, path string, md map[string]string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	w := &safetensors.Writer{Align: safetensors.Align8Mod16, Metadata: md}
	if err := w.AddFloat32("blocks.0.attn.qkv_proj.weight", safetensors.BF16, []int64{6, 2}, make([]float32, 12)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
}

func TestQKVLayoutFromProvenance(t *testing.T) {
	cfg, _ := json.Marshal(map[string]any{"transformer": arch.TinyDiT(), "image_model": "minimax_h3"})
	cases := []struct {
		name   string
		make   func(root string)
		want   QKVLayout
		reason string
		err    string
	}{
		{"official", func(root string) {
			if err := WriteTiny(root, TinyOptions{Seed: 1}); err != nil {
				t.Fatal(err)
			}
		}, QKVInterleaved, "MiniMaxAI diffusers layout", ""},
		{"official converted from flat", func(root string) {
			if err := WriteTiny(root, TinyOptions{Seed: 1}); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{"FL2VA", "Ref2VA"} {
				if err := markQKV(filepath.Join(root, p, "transformer", "config.json"), QKVFlat); err != nil {
					t.Fatal(err)
				}
			}
		}, QKVFlat, "_h3studio.qkv_layout", ""},
		{"comfy repack", func(root string) {
			writeRepackDiT(t, filepath.Join(root, "diffusion_models", "minimax_h3_fl2va_bf16.safetensors"), map[string]string{"config": string(cfg)})
		}, QKVFlat, "Comfy-Org repack", ""},
		{"unexplained single file", func(root string) {
			writeRepackDiT(t, filepath.Join(root, "diffusion_models", "minimax_h3_fl2va_bf16.safetensors"), map[string]string{"format": "pt"})
		}, "", "", "refused"},
		{"stated in file", func(root string) {
			writeRepackDiT(t, filepath.Join(root, "minimax_h3_ref2va_custom.safetensors"), map[string]string{"h3studio.qkv_layout": "interleaved"})
		}, QKVInterleaved, "h3studio.qkv_layout metadata", ""},
		{"community gguf", func(root string) {
			w := &gguf.Writer{}
			w.SetString("general.architecture", "minimax_h3")
			if err := w.Add("model.diffusion_model.blocks.0.attn.qkv_proj.weight", gguf.F32, []int64{2, 6}, make([]byte, 48)); err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Join(root, "diffusion_models"), 0o755)
			if err := w.WriteFile(filepath.Join(root, "diffusion_models", "minimax_h3_fl2va-Q4_K_M.gguf")); err != nil {
				t.Fatal(err)
			}
		}, QKVFlat, "converted from the Comfy-Org repack", ""},
		{"partition unknown", func(root string) {
			writeRepackDiT(t, filepath.Join(root, "minimax_h3_bf16.safetensors"), map[string]string{"config": string(cfg)})
		}, "", "", "names neither fl2va nor ref2va"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := filepath.Join(t.TempDir(), "snap")
			c.make(root)
			s, err := Discover(root)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tr := s.Partitions[0].Component(Transformer)
			if tr.QKV != c.want || !strings.Contains(tr.QKVReason, c.reason) {
				t.Fatalf("qkv %q (%s), want %q (%s)", tr.QKV, tr.QKVReason, c.want, c.reason)
			}
			if c.name == "community gguf" {
				src, err := tr.Open()
				if err != nil {
					t.Fatal(err)
				}
				info, ok := src.Lookup("blocks.0.attn.qkv_proj.weight")
				src.Close()
				if !ok || info.Shape[0] != 6 || info.Shape[1] != 2 {
					t.Fatalf("GGUF tensor not found under its checkpoint name or shape not reversed: %+v", info)
				}
			}
		})
	}
}

func TestDiscoverRefusesTwoPartitionsWithOneName(t *testing.T) {
	root := filepath.Join(t.TempDir(), "snap")
	if err := WriteTiny(root, TinyOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "Ref2VA", "model_index.json")
	raw, _ := os.ReadFile(p)
	os.WriteFile(p, []byte(strings.Replace(string(raw), `"partition": "ref2va"`, `"partition": "fl2va"`, 1)), 0o644)
	if _, err := Discover(root); err == nil || !strings.Contains(err.Error(), "both say") {
		t.Fatalf("err = %v", err)
	}
}

func TestGGUFOtherBlockTypesDescribedNotLoaded(t *testing.T) {
	w := &gguf.Writer{}
	w.SetString("general.architecture", "minimax_h3")
	if err := w.Add("blocks.0.mlp.fc2.weight", gguf.Type(14), []int64{256, 2}, make([]byte, 2*210)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "minimax_h3_fl2va-Q4_K_M.gguf")
	if err := w.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	src, err := OpenGGUF(p)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	info, _ := src.Lookup("blocks.0.mlp.fc2.weight")
	if info.DType != "Q6_K" || info.Bytes != 420 {
		t.Fatalf("Q6_K tensor described as %+v", info)
	}
	var m struct {
		FC2 *ggml.Tensor `st:"blocks.0.mlp.fc2.weight"`
	}
	_, err = LoadModule(cpuBackend(t), src, &m, LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "Q6_K has no ggml equivalent") {
		t.Fatalf("err = %v", err)
	}
}

// Every layout finds its tokenizer through the one search list: the
// Comfy-Org repack keeps it in text_encoders/, where the app's own list
// once missed it.
func TestSnapshotTokenizer(t *testing.T) {
	cfg, _ := json.Marshal(map[string]any{"transformer": arch.TinyDiT(), "image_model": "minimax_h3"})
	for _, rel := range []string{"text_encoders/tokenizer.json", "tokenizer/tokenizer.json", "tokenizer.json"} {
		root := t.TempDir()
		writeRepackDiT(t, filepath.Join(root, "diffusion_models", "minimax_h3_fl2va_bf16.safetensors"), map[string]string{"config": string(cfg)})
		tok := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(tok), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tok, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Discover(root)
		if err != nil {
			t.Fatal(err)
		}
		if s.Tokenizer() != tok || s.Partitions[0].Tokenizer != tok {
			t.Errorf("%s: snapshot tokenizer %q, partition's %q", rel, s.Tokenizer(), s.Partitions[0].Tokenizer)
		}
	}
	root := t.TempDir()
	if err := WriteTiny(root, TinyOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	s, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, "FL2VA", "tokenizer", "tokenizer.json"); s.Tokenizer() != want {
		t.Errorf("official tree: tokenizer %q, want %q", s.Tokenizer(), want)
	}
}
