package tokenizer

import (
	"path/filepath"
	"testing"
)

// hfVectors is testdata/hf_vectors.json, written by tools/tokref/hf_vectors.py
// with HF tokenizers (Rust) on the device machine: the tiny tokenizers it
// trained there (testdata/tiny_*.json) and the real Qwen3 one, each encoding
// the same texts (the corpora, added-token cases and seeded random strings).
type hfVectors struct {
	Version string   `json:"tokenizers_version"`
	Texts   []string `json:"texts"`
	Sets    []struct {
		Tokenizer string   `json:"tokenizer"`
		IDs       [][]int  `json:"ids"`
		Decoded   []string `json:"decoded"`
	} `json:"sets"`
}

// TestHFVectors is the parity proof against HF tokenizers itself, including
// the characters where the JavaScript reference's regex classes differ
// (U+0085, U+FEFF, long s) and the added-token options transformers.js
// approximates (single_word, lstrip, rstrip).
func TestHFVectors(t *testing.T) {
	var v hfVectors
	readJSON(t, filepath.Join("testdata", "hf_vectors.json"), &v)
	if len(v.Sets) < 2 || len(v.Texts) == 0 {
		t.Fatalf("testdata/hf_vectors.json holds %d sets of %d texts", len(v.Sets), len(v.Texts))
	}
	total, agree := 0, 0
	for _, set := range v.Sets {
		t.Run(set.Tokenizer, func(t *testing.T) {
			var tok *Tokenizer
			if set.Tokenizer == "qwen3" {
				tok = qwen3(t)
			} else {
				tok = loadTestdata(t, set.Tokenizer)
			}
			for i, text := range v.Texts {
				total++
				got := tok.Encode(text)
				if compareIDs(t, "HF tokenizers "+v.Version, text, got, set.IDs[i]) {
					agree++
				}
				if d := tok.Decode(set.IDs[i]); d != set.Decoded[i] {
					t.Errorf("decode %v: got %q, want %q", set.IDs[i], d, set.Decoded[i])
				}
			}
		})
	}
	t.Logf("HF tokenizers %s: %d/%d encodings identical over %d tokenizers", v.Version, agree, total, len(v.Sets))
}
