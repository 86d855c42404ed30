package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// fileJSON is the subset of the HF tokenizers serialization that a byte-level
// BPE tokenizer uses. Sections we do not model (truncation, padding,
// post_processor) do not change the ids of a raw encode and are ignored.
type fileJSON struct {
	AddedTokens  []addedTokenJSON `json:"added_tokens"`
	Normalizer   json.RawMessage  `json:"normalizer"`
	PreTokenizer json.RawMessage  `json:"pre_tokenizer"`
	Decoder      json.RawMessage  `json:"decoder"`
	Model        modelJSON        `json:"model"`
}

type addedTokenJSON struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

type modelJSON struct {
	Type                    string         `json:"type"`
	Dropout                 *float64       `json:"dropout"`
	UnkToken                *string        `json:"unk_token"`
	ContinuingSubwordPrefix *string        `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string        `json:"end_of_word_suffix"`
	FuseUnk                 bool           `json:"fuse_unk"`
	ByteFallback            bool           `json:"byte_fallback"`
	IgnoreMerges            bool           `json:"ignore_merges"`
	Vocab                   map[string]int `json:"vocab"`
	Merges                  mergeList      `json:"merges"`
}

// mergeList accepts both serializations HF tokenizers writes: the legacy
// "left right" strings and, since tokenizers 0.20, ["left", "right"] pairs
// (which allow spaces inside a token).
type mergeList [][2]string

func (m *mergeList) UnmarshalJSON(data []byte) error {
	var pairs [][2]string
	if err := json.Unmarshal(data, &pairs); err == nil {
		*m = pairs
		return nil
	}
	var lines []string
	if err := json.Unmarshal(data, &lines); err != nil {
		return fmt.Errorf("merges is neither a list of \"a b\" strings nor of [a, b] pairs")
	}
	out := make([][2]string, len(lines))
	for i, l := range lines {
		parts := strings.Split(l, " ")
		if len(parts) != 2 {
			return fmt.Errorf("merge %d %q is not two space-separated tokens", i+1, l)
		}
		out[i] = [2]string{parts[0], parts[1]}
	}
	*m = out
	return nil
}

type typed struct {
	Type string `json:"type"`
}

type normalizerJSON struct {
	Type        string            `json:"type"`
	Normalizers []json.RawMessage `json:"normalizers"`
}

type preTokenizerJSON struct {
	Type          string            `json:"type"`
	PreTokenizers []json.RawMessage `json:"pretokenizers"`
	// Split
	Pattern  map[string]string `json:"pattern"`
	Behavior string            `json:"behavior"`
	Invert   bool              `json:"invert"`
	// ByteLevel
	AddPrefixSpace bool  `json:"add_prefix_space"`
	UseRegex       *bool `json:"use_regex"`
}

// isNull reports whether a raw JSON section is absent or null.
func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

// parseNormalizer flattens the normalizer section into a list of Unicode
// normalization forms applied in order.
func parseNormalizer(raw json.RawMessage) ([]normForm, error) {
	if isNull(raw) {
		return nil, nil
	}
	var n normalizerJSON
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	if n.Type == "Sequence" {
		var out []normForm
		for _, sub := range n.Normalizers {
			forms, err := parseNormalizer(sub)
			if err != nil {
				return nil, err
			}
			out = append(out, forms...)
		}
		return out, nil
	}
	f, ok := normForms[n.Type]
	if !ok {
		return nil, &UnsupportedError{What: "normalizer " + n.Type}
	}
	return []normForm{f}, nil
}

// preStep is one pre-tokenizer stage: a split by a known pattern, or the
// ByteLevel stage (which must come last, since it rewrites bytes to the
// printable alphabet the vocabulary is written in).
type preStep struct {
	split splitFunc // nil for the ByteLevel stage
}

func parsePreTokenizer(raw json.RawMessage) ([]preStep, error) {
	if isNull(raw) {
		return nil, &UnsupportedError{What: "a tokenizer without a ByteLevel pre-tokenizer"}
	}
	steps, err := parsePreSteps(raw)
	if err != nil {
		return nil, err
	}
	for i, s := range steps {
		if s.split == nil && i != len(steps)-1 {
			return nil, &UnsupportedError{What: "a pre-tokenizer stage after ByteLevel"}
		}
	}
	if len(steps) == 0 || steps[len(steps)-1].split != nil {
		return nil, &UnsupportedError{What: "a tokenizer without a ByteLevel pre-tokenizer"}
	}
	return steps, nil
}

func parsePreSteps(raw json.RawMessage) ([]preStep, error) {
	var p preTokenizerJSON
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch p.Type {
	case "Sequence":
		var out []preStep
		for _, sub := range p.PreTokenizers {
			s, err := parsePreSteps(sub)
			if err != nil {
				return nil, err
			}
			out = append(out, s...)
		}
		return out, nil
	case "Split":
		re, ok := p.Pattern["Regex"]
		if !ok {
			return nil, &UnsupportedError{What: "a Split pre-tokenizer on a plain string"}
		}
		f, ok := knownPatterns[re]
		if !ok {
			return nil, &UnsupportedError{What: fmt.Sprintf("Split regex %q", re)}
		}
		if p.Behavior != "Isolated" || p.Invert {
			return nil, &UnsupportedError{What: fmt.Sprintf("Split behavior %q (invert %v)", p.Behavior, p.Invert)}
		}
		return []preStep{{split: f}}, nil
	case "ByteLevel":
		var steps []preStep
		if p.AddPrefixSpace {
			steps = append(steps, preStep{split: prefixSpace})
		}
		// HF's ByteLevel splits with the GPT-2 pattern unless use_regex is false.
		if p.UseRegex == nil || *p.UseRegex {
			steps = append(steps, preStep{split: splitGPT2})
		}
		return append(steps, preStep{}), nil
	}
	return nil, &UnsupportedError{What: "pre-tokenizer " + p.Type}
}

func parseDecoder(raw json.RawMessage) error {
	if isNull(raw) {
		return &UnsupportedError{What: "a tokenizer without a ByteLevel decoder"}
	}
	var d typed
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf("decoder: %w", err)
	}
	if d.Type != "ByteLevel" {
		return &UnsupportedError{What: "decoder " + d.Type}
	}
	return nil
}
