package tokenizer

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// jsSafePools are the character classes of the random strings compared with
// the JavaScript reference. They leave out U+0085, U+FEFF and U+017F, where
// JavaScript's regex differs from HF's Oniguruma (TestHFVectors covers them).
var jsSafePools = [][]string{
	strings.Split("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", ""),
	strings.Split("0123456789", ""),
	{" ", " ", " ", "\n", "\r", "\r\n", "\t", "\n\n", "\u00a0", "\u3000", "\u2003", "\u2028", "\v", "\f"},
	strings.Split(".,;:!?-_'\"()[]{}<>/\\|@#$%^&*+=~`", ""),
	{"'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'Re"},
	strings.Split("你好世界日本語한국어の雪", ""),
	{"e\u0301", "\u00e9", "\u00f1", "A\u030a", "\u0308", "\u0915\u094d", "\u0e01\u0e34"},
	{"\U0001f600", "\U0001f44d\U0001f3fd", "\u2764\ufe0f", "\U0001f1eb\U0001f1f7", "\U0001f468\u200d\U0001f469"},
	{"<|image_pad|>", "<|vision_start|>", "<|vision_end|>", "<|endoftext|>", "<think>", "<|video_pad|>", "<|im_start|>"},
	{"\u0661", "\u0662", "\u00bd", "\u2167", "\u00b2", "\u2460"},
	{"<Picture 1>: ", "<Audio 2>: ", "<Video 3>: ", "<0.2 seconds>", "<11.2 seconds>"},
}

func randomTexts(seed uint64, n int) []string {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for k := 1 + rng.IntN(32); k > 0; k-- {
			pool := jsSafePools[rng.IntN(len(jsSafePools))]
			b.WriteString(pool[rng.IntN(len(pool))])
		}
		out[i] = b.String()
	}
	return out
}

// presentation builds an H3-style Ref2VA presentation of roughly
// targetBytes bytes (about targetBytes/8 Qwen3 tokens): labels, vision blocks of pad tokens and long,
// varied prompt text (numbers change so the BPE cache does not hide work).
func presentation(corpus []string, targetBytes int) string {
	var b strings.Builder
	for i := 0; b.Len() < targetBytes; i++ {
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "<Picture %d>: <|vision_start|>%s<|vision_end|>", i/5+1, strings.Repeat("<|image_pad|>", 40))
		case 1:
			fmt.Fprintf(&b, "<Video %d>: <%d.2 seconds><|vision_start|>%s<|vision_end|>", i/5+1, i%60, strings.Repeat("<|video_pad|>", 30))
		default:
			fmt.Fprintf(&b, "%s Shot %d lasts %d.%d s; ", corpus[(i*7)%len(corpus)], i, i%13, i%10)
		}
	}
	return b.String()
}

func loadCorpus(t testing.TB) []string {
	var c []string
	readJSON(t, filepath.Join("testdata", "corpus.json"), &c)
	return c
}

// TestReferenceQwen3 compares our ids with the JavaScript reference, id for
// id, on the corpus, seeded random strings and long presentations (the
// longest about 100k tokens), and our decode with its decode.
func TestReferenceQwen3(t *testing.T) {
	tok := qwen3(t)
	corpus := loadCorpus(t)
	texts := append([]string{}, corpus...)
	texts = append(texts, randomTexts(7, 1000)...)
	for _, n := range []int{5000, 60000, 800000} {
		texts = append(texts, presentation(corpus, n))
	}
	got := make([][]int, len(texts))
	var decode [][]int
	for i, text := range texts {
		got[i] = tok.Encode(text)
		if i < len(corpus) {
			// Whole encodings, and halves that may cut a character.
			decode = append(decode, got[i], got[i][:len(got[i])/2])
		}
	}
	ref := runTokref(t, tokrefRequest{Texts: texts, Decode: decode})
	agree, tokens := 0, 0
	for i, text := range texts {
		tokens += len(ref.IDs[i])
		if compareIDs(t, "transformers.js", text, got[i], ref.IDs[i]) {
			agree++
		}
	}
	for i, ids := range decode {
		if d := tok.Decode(ids); d != ref.Decoded[i] {
			t.Errorf("decode %v: got %q, reference %q", ids, d, ref.Decoded[i])
		}
	}
	t.Logf("transformers.js: %d/%d texts identical (%d tokens, longest %d), %d decodings",
		agree, len(texts), tokens, len(ref.IDs[len(texts)-1]), len(decode))
	if n := len(ref.IDs[len(texts)-1]); n < 100000 {
		t.Errorf("the long presentation has %d tokens, want at least 100000", n)
	}
}

// TestReferenceTiny loads small tokenizers HF trained and compares with the
// JavaScript reference loading the same files. Only TestHFVectors checks
// what transformers.js does differently from HF: the single_word and
// lstrip/rstrip added tokens of tiny_qwen (not in these texts), fuse_unk
// (it fuses unknowns across words: tiny_unk) and continuing_subword_prefix
// with end_of_word_suffix (tiny_affix).
func TestReferenceTiny(t *testing.T) {
	texts := append(loadCorpus(t), randomTexts(11, 300)...)
	for _, name := range []string{"tiny_qwen.json", "tiny_qwen_ignore.json", "tiny_gpt2.json", "tiny_gpt2_legacy.json"} {
		t.Run(name, func(t *testing.T) {
			tok := loadTestdata(t, name)
			ref := runTokref(t, tokrefRequest{Tokenizer: filepath.Join("testdata", name), Texts: texts})
			agree := 0
			for i, text := range texts {
				if compareIDs(t, "transformers.js", text, tok.Encode(text), ref.IDs[i]) {
					agree++
				}
			}
			t.Logf("%s: %d/%d identical", name, agree, len(texts))
		})
	}
}
