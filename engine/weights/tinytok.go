package weights

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
)

// qwenSpecials are Qwen3's added tokens in id order (151643..151668 in
// the real vocabulary), then the seven MiniMax-H3 additions
// (151669..151675). special=false marks the ones Qwen3 declares
// non-special.
var qwenSpecials = []struct {
	content string
	special bool
}{
	{"<|endoftext|>", true}, {"<|im_start|>", true}, {"<|im_end|>", true},
	{"<|object_ref_start|>", true}, {"<|object_ref_end|>", true},
	{"<|box_start|>", true}, {"<|box_end|>", true},
	{"<|quad_start|>", true}, {"<|quad_end|>", true},
	{"<|vision_start|>", true}, {"<|vision_end|>", true}, {"<|vision_pad|>", true},
	{"<|image_pad|>", true}, {"<|video_pad|>", true},
	{"<tool_call>", false}, {"</tool_call>", false},
	{"<|fim_prefix|>", true}, {"<|fim_middle|>", true}, {"<|fim_suffix|>", true}, {"<|fim_pad|>", true},
	{"<|repo_name|>", true}, {"<|file_sep|>", true},
	{"<tool_response>", false}, {"</tool_response>", false},
	{"<think>", false}, {"</think>", false},
	{"<d>", true}, {"</d>", true}, {"<|cutoff|>", true},
	{"<|lyrics_start|>", true}, {"<|lyrics_end|>", true},
	{"<|caption_start|>", true}, {"<|caption_end|>", true},
}

// h3AddedTokens is the number of MiniMax-H3 additions at the end of
// qwenSpecials.
const h3AddedTokens = 7

// The tiny vocabulary: 256 byte tokens, tinyMerges learned merges, then
// the specials in Qwen's order starting at tinySpecialBase.
const (
	tinyMerges      = 256
	tinySpecialBase = 256 + tinyMerges
)

// tinySpecialID returns the tiny vocabulary's id of a special token.
func tinySpecialID(content string) int {
	for i, s := range qwenSpecials {
		if s.content == content {
			return tinySpecialBase + i
		}
	}
	panic("weights: unknown special token " + content)
}

// qwenSplitPattern is Qwen2/3's pre-tokenizer regex, verbatim.
const qwenSplitPattern = `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// tinyCorpus is the text the tiny BPE merges are learned from.
const tinyCorpus = `A red fox runs through fresh snow at dawn, its breath rising in the cold air.
The camera tracks the fox from the side as it leaps over a fallen branch.
Soft wind hisses through the pine trees while distant birds call.
A woman in a yellow raincoat walks along a wet city street at night; neon signs reflect in the puddles.
Rain taps on the umbrella and cars pass with a low rumble.
Close-up of a cup of coffee on a wooden table, steam curling upward in warm morning light.
A small boat drifts on a calm lake surrounded by mountains, the water mirroring the sky.
Waves crash against the rocks and seagulls cry above the shore.
Two children laugh as they run through a field of tall grass and sunflowers.
An old man plays a slow melody on a violin in a quiet room.
The drone shot rises above the forest, revealing a river that winds toward the sea.
A cat sleeps on the windowsill while snow falls outside the glass.
Fireworks burst over the harbor and the crowd cheers.
The chef slices onions quickly; the knife clicks against the board and oil sizzles in the pan.
A train crosses a bridge at sunset, its horn echoing across the valley.
Picture 1, Picture 2, Video 1, Audio 1: 0.2 seconds, 1.2 seconds, 2.2 seconds.
`

// bytesToUnicode is the GPT-2 byte-level alphabet: printable bytes map to
// themselves, the rest to code points from 256 up, so every token is a
// printable string. Byte b's token id is its position in this order.
func bytesToUnicode() ([256]rune, []byte) {
	var table [256]rune
	var order []byte
	used := map[int]bool{}
	for _, r := range [][2]int{{'!', '~'}, {0xa1, 0xac}, {0xae, 0xff}} {
		for b := r[0]; b <= r[1]; b++ {
			table[b] = rune(b)
			used[b] = true
			order = append(order, byte(b))
		}
	}
	n := 0
	for b := 0; b < 256; b++ {
		if !used[b] {
			table[b] = rune(256 + n)
			n++
			order = append(order, byte(b))
		}
	}
	return table, order
}

// trainingWords splits text roughly as Qwen's pattern does (letters with
// one leading non-letter, single digits, punctuation runs); merges learned
// from it are valid for any split, only their usefulness depends on it.
func trainingWords(text string) []string {
	var out []string
	rs := []rune(text)
	for i := 0; i < len(rs); {
		j := i
		switch {
		case unicode.IsDigit(rs[i]):
			j = i + 1
		case unicode.IsLetter(rs[i]) || (i+1 < len(rs) && unicode.IsLetter(rs[i+1]) && !unicode.IsDigit(rs[i]) && rs[i] != '\n'):
			j = i + 1
			for j < len(rs) && unicode.IsLetter(rs[j]) {
				j++
			}
		default:
			j = i + 1
			for j < len(rs) && !unicode.IsLetter(rs[j]) && !unicode.IsDigit(rs[j]) && !unicode.IsSpace(rs[j]) {
				j++
			}
		}
		out = append(out, string(rs[i:j]))
		i = j
	}
	return out
}

// trainMerges learns n byte-level BPE merges; ties break on the pair's
// text so the result is the same on every run.
func trainMerges(text string, n int) [][2]string {
	table, _ := bytesToUnicode()
	counts := map[string]int{}
	for _, w := range trainingWords(text) {
		var sb strings.Builder
		for _, b := range []byte(w) {
			sb.WriteRune(table[b])
		}
		counts[sb.String()]++
	}
	type word struct {
		syms  []string
		count int
	}
	var words []word
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var syms []string
		for _, r := range k {
			syms = append(syms, string(r))
		}
		words = append(words, word{syms, counts[k]})
	}
	var merges [][2]string
	for len(merges) < n {
		pairs := map[[2]string]int{}
		for _, w := range words {
			for i := 0; i+1 < len(w.syms); i++ {
				pairs[[2]string{w.syms[i], w.syms[i+1]}] += w.count
			}
		}
		var best [2]string
		bestN := 0
		for p, c := range pairs {
			if c > bestN || (c == bestN && p[0]+"\x00"+p[1] < best[0]+"\x00"+best[1]) {
				best, bestN = p, c
			}
		}
		if bestN == 0 {
			break
		}
		merges = append(merges, best)
		for wi := range words {
			s := words[wi].syms
			var out []string
			for i := 0; i < len(s); i++ {
				if i+1 < len(s) && s[i] == best[0] && s[i+1] == best[1] {
					out = append(out, best[0]+best[1])
					i++
				} else {
					out = append(out, s[i])
				}
			}
			words[wi].syms = out
		}
	}
	return merges
}

// tinyAdded is one added_tokens entry of tokenizer.json.
type tinyAdded struct {
	ID         int64  `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// tinyVocabJSON is vocab.json: token to id, in id order.
func tinyVocabJSON(vocab []string) *bytes.Buffer {
	var vj bytes.Buffer
	vj.WriteByte('{')
	for id, tok := range vocab {
		if id > 0 {
			vj.WriteByte(',')
		}
		k, _ := json.Marshal(tok)
		fmt.Fprintf(&vj, "%s:%d", k, id)
	}
	vj.WriteByte('}')
	return &vj
}

// tinyAddedTokens are tokenizer.json's added_tokens and
// tokenizer_config.json's added_tokens_decoder for the specials.
func tinyAddedTokens() ([]tinyAdded, map[string]any) {
	var addedTokens []tinyAdded
	decoderMap := map[string]any{}
	for i, s := range qwenSpecials {
		a := tinyAdded{ID: int64(tinySpecialBase + i), Content: s.content, Special: s.special}
		// MiniMax-H3's own tokens live only in tokenizer_config.json, as
		// ComfyUI reads the release's ("tokenizer_config extends Qwen"),
		// so the tiny model exercises the loader's merge of the two.
		if i < len(qwenSpecials)-h3AddedTokens {
			addedTokens = append(addedTokens, a)
		}
		decoderMap[fmt.Sprint(a.ID)] = map[string]any{"content": a.Content, "lstrip": false, "normalized": false, "rstrip": false, "single_word": false, "special": a.Special}
	}
	return addedTokens, decoderMap
}

// tinyTokenizerFiles renders tokenizer.json (HF tokenizers schema, as
// Qwen3 ships it), tokenizer_config.json, vocab.json and merges.txt.
func tinyTokenizerFiles() (map[string][]byte, error) {
	table, order := bytesToUnicode()
	merges := trainMerges(tinyCorpus, tinyMerges)
	if len(merges) != tinyMerges {
		return nil, fmt.Errorf("weights: tiny corpus yields %d merges, want %d", len(merges), tinyMerges)
	}
	vocab := make([]string, 0, tinySpecialBase)
	for _, b := range order {
		vocab = append(vocab, string(table[b]))
	}
	for _, m := range merges {
		vocab = append(vocab, m[0]+m[1])
	}
	vj := tinyVocabJSON(vocab)
	mergeLines := make([]string, len(merges))
	for i, m := range merges {
		mergeLines[i] = m[0] + " " + m[1]
	}
	addedTokens, decoderMap := tinyAddedTokens()
	byteLevel := map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": false, "use_regex": false}
	mergesJSON, _ := json.Marshal(mergeLines)
	tok := struct {
		Version       string            `json:"version"`
		Truncation    any               `json:"truncation"`
		Padding       any               `json:"padding"`
		AddedTokens   []tinyAdded       `json:"added_tokens"`
		Normalizer    map[string]string `json:"normalizer"`
		PreTokenizer  any               `json:"pre_tokenizer"`
		PostProcessor any               `json:"post_processor"`
		Decoder       any               `json:"decoder"`
		Model         json.RawMessage   `json:"model"`
	}{
		Version: "1.0", AddedTokens: addedTokens, Normalizer: map[string]string{"type": "NFC"},
		PreTokenizer: map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Split", "pattern": map[string]string{"Regex": qwenSplitPattern}, "behavior": "Isolated", "invert": false},
			byteLevel,
		}},
		PostProcessor: byteLevel, Decoder: byteLevel,
		Model: json.RawMessage(`{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":"","end_of_word_suffix":"","fuse_unk":false,"byte_fallback":false,"ignore_merges":false,"vocab":` + vj.String() + `,"merges":` + string(mergesJSON) + `}`),
	}
	tokJSON, err := marshalJSON(tok)
	if err != nil {
		return nil, err
	}
	cfg, _ := marshalJSON(map[string]any{
		"add_bos_token": false, "add_prefix_space": false, "added_tokens_decoder": decoderMap,
		"bos_token": nil, "clean_up_tokenization_spaces": false, "eos_token": "<|im_end|>",
		"errors": "replace", "model_max_length": 262144, "pad_token": "<|endoftext|>",
		"split_special_tokens": false, "tokenizer_class": "Qwen2Tokenizer", "unk_token": nil,
	})
	return map[string][]byte{
		"tokenizer.json":        tokJSON,
		"tokenizer_config.json": cfg,
		"vocab.json":            append(vj.Bytes(), '\n'),
		"merges.txt":            []byte("#version: 0.2\n" + strings.Join(mergeLines, "\n") + "\n"),
	}, nil
}
