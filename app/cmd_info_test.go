package app

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/arch"
)

func tinySnapshot(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "tiny")
	var out, errb bytes.Buffer
	if code := Main([]string{"tiny-model", "--out", dir, "--seed", "2"}, &out, &errb); code != 0 {
		t.Fatalf("tiny-model exit %d: %s", code, errb.String())
	}
	return dir
}

func TestInfoJSONContract(t *testing.T) {
	dir := tinySnapshot(t)
	var out, errb bytes.Buffer
	if code := Main([]string{"info", "-d", dir, "--json"}, &out, &errb); code != 0 {
		t.Fatalf("info exit %d: %s", code, errb.String())
	}
	var r struct {
		QKV        string `json:"qkv_layout"`
		Partitions []struct {
			Name       string `json:"name"`
			Components []struct {
				Name      string `json:"name"`
				DType     string `json:"dtype"`
				Params    int64  `json:"params"`
				Bytes     int64  `json:"bytes"`
				Residency string `json:"residency"`
				Shards    []struct {
					Path       string `json:"path"`
					DataOffset int64  `json:"data_offset"`
					Aligned16  bool   `json:"aligned16"`
				} `json:"shards"`
			} `json:"components"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("info --json printed invalid JSON: %v\n%s", err, out.String())
	}
	if r.QKV != "interleaved" || len(r.Partitions) != 2 || r.Partitions[0].Name != "fl2va" || r.Partitions[1].Name != "ref2va" {
		t.Fatalf("report %+v", r)
	}
	dit := arch.TinyDiT()
	for _, c := range r.Partitions[0].Components {
		if c.Params <= 0 || c.Bytes <= 0 || len(c.Shards) == 0 || c.Residency == "" || c.DType == "" {
			t.Errorf("component %+v incomplete", c)
		}
		for _, s := range c.Shards {
			if s.Aligned16 || s.DataOffset%16 != 8 {
				t.Errorf("%s: data offset %d aligned16 %v, want 8 mod 16", s.Path, s.DataOffset, s.Aligned16)
			}
		}
		if c.Name == "transformer" {
			// hidden 64: 2 blocks and 2 refiner blocks of attention+MLP, 2 AdaLN, top and final layers.
			perCore := 3*96*64 + 64*96 + 2*128*64 + 64*128 + 2*64 + 2*32
			want := int64(2*perCore + 2*(perCore+(1152*32+1152)) + 64 + (64*96 + 64) + (64*32 + 64) + (64*64 + 64) +
				(64*32 + 64) + (32*64 + 32) + 4 + 64 + (128*32 + 128) + (96*64 + 96) + (32*64 + 32))
			if c.Params != want {
				t.Errorf("transformer params %d, want %d (hidden %d)", c.Params, want, dit.Hidden)
			}
		}
	}
}

func TestInfoRefusesBrokenSnapshots(t *testing.T) {
	cases := map[string]func(dir string){
		"missing shard": func(dir string) {
			os.Remove(filepath.Join(dir, "FL2VA", "transformer", "model-00002-of-00002.safetensors"))
		},
		"truncated shard": func(dir string) {
			p := filepath.Join(dir, "Ref2VA", "text_encoder", "model-00001-of-00002.safetensors")
			st, _ := os.Stat(p)
			os.Truncate(p, st.Size()-100)
		},
		"not H3": func(dir string) {
			os.RemoveAll(dir)
			os.MkdirAll(filepath.Join(dir, "photos"), 0o755)
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644)
		},
		"no partition key": func(dir string) {
			os.WriteFile(filepath.Join(dir, "FL2VA", "model_index.json"), []byte(`{"_class_name":"MiniMaxH3Pipeline"}`), 0o644)
		},
	}
	want := map[string]string{
		"missing shard":    "model-00002-of-00002.safetensors is missing",
		"truncated shard":  "is damaged or incomplete",
		"not H3":           "is not a MiniMax-H3 snapshot",
		"no partition key": "has no _minimax_h3 block",
	}
	for name, breakIt := range cases {
		t.Run(name, func(t *testing.T) {
			dir := tinySnapshot(t)
			breakIt(dir)
			before := listTree(dir)
			var out, errb bytes.Buffer
			code := Main([]string{"info", "-d", dir, "--json"}, &out, &errb)
			msg := errb.String()
			if code == 0 || out.Len() != 0 {
				t.Fatalf("exit %d, stdout %q", code, out.String())
			}
			if !strings.Contains(msg, want[name]) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
				t.Fatalf("stderr %q: want one line containing %q", msg, want[name])
			}
			if after := listTree(dir); after != before {
				t.Fatalf("info changed the folder:\n%s\n%s", before, after)
			}
			t.Log(strings.TrimSpace(msg))
		})
	}
}

func listTree(dir string) string {
	var b strings.Builder
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil {
			b.WriteString(p + " " + info.ModTime().String() + "\n")
		}
		return nil
	})
	return b.String()
}
