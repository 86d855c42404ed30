// Package tokenizer turns the user's prompt and H3's label text into Qwen3-VL
// token ids: the first stage of the text encoder (engine/textenc builds the
// presentation from these ids).
//
// It implements byte-level BPE from a Hugging Face tokenizer.json, id for id
// with HF tokenizers' encode(text, add_special_tokens=False): added tokens
// are split out first, the rest is normalized (NFC for Qwen), split by the
// pre-tokenizer pattern (Qwen2's, matched by hand with Oniguruma semantics),
// mapped to the byte-level alphabet and merged by rank. There is no chat
// template and no BOS/EOS: H3 feeds the raw prompt. Reference: HF
// tokenizers (added_vocabulary.rs, models/bpe, pre_tokenizers/byte_level.rs);
// parity is tested against the transformers.js port in tools/tokref.
package tokenizer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// Qwen3-VL control tokens H3's presentation uses. Look their ids up with
// Tokenizer.ID; in the Qwen3 vocabulary they are 151643 (EndOfText, the pad
// token an empty prompt becomes), 151652, 151653, 151655 and 151656.
const (
	EndOfText   = "<|endoftext|>"
	VisionStart = "<|vision_start|>"
	VisionEnd   = "<|vision_end|>"
	ImagePad    = "<|image_pad|>"
	VideoPad    = "<|video_pad|>"
)

// maxVocab bounds token ids (Qwen3 has 151,669; the largest vocabularies
// in use hold about 260k), so a corrupt file cannot make the id table huge.
const maxVocab = 1 << 21

// FormatError reports a tokenizer.json that cannot be read as a BPE tokenizer.
type FormatError struct {
	Path string
	Err  error
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("tokenizer: %s: %v; use the tokenizer.json of the model snapshot (its tokenizer/ folder)", e.Path, e.Err)
}

func (e *FormatError) Unwrap() error { return e.Err }

// UnsupportedError reports a valid tokenizer.json feature this package does
// not implement.
type UnsupportedError struct{ What string }

func (e *UnsupportedError) Error() string { return "unsupported " + e.What }

// Tokenizer encodes and decodes with one tokenizer.json. It is safe for
// concurrent use.
type Tokenizer struct {
	model      *bpeModel
	normalize  []normForm
	preSteps   []preStep
	added      []*AddedToken
	rawAdded   *addedMatcher // tokens matched before normalization
	normAdded  *addedMatcher // tokens matched after normalization
	addedByID  map[int]*AddedToken
	addedByStr map[string]*AddedToken
	idToToken  []string
}

// Load reads a tokenizer.json. path may name the file or a folder holding
// it (a snapshot's tokenizer/ folder).
func Load(path string) (*Tokenizer, error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		path = filepath.Join(path, "tokenizer.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	t, err := parse(data)
	if err != nil {
		return nil, &FormatError{Path: path, Err: err}
	}
	if err := t.addConfigTokens(filepath.Join(filepath.Dir(path), "tokenizer_config.json")); err != nil {
		return nil, err
	}
	return t, nil
}

// Parse builds a tokenizer from the bytes of a tokenizer.json.
func Parse(data []byte) (*Tokenizer, error) {
	t, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("tokenizer: %w", err)
	}
	return t, nil
}

func parse(data []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	if f.Model.Type != "BPE" && !(f.Model.Type == "" && f.Model.Merges != nil) {
		return nil, &UnsupportedError{What: fmt.Sprintf("model type %q (want BPE)", f.Model.Type)}
	}
	if len(f.Model.Vocab) == 0 {
		return nil, errors.New("model.vocab is empty")
	}
	t := &Tokenizer{addedByID: map[int]*AddedToken{}, addedByStr: map[string]*AddedToken{}}
	var err error
	if t.normalize, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if t.preSteps, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if err = parseDecoder(f.Decoder); err != nil {
		return nil, err
	}
	vocab := make(map[string]int32, len(f.Model.Vocab))
	maxID := -1
	for tok, id := range f.Model.Vocab {
		if id < 0 || id >= maxVocab {
			return nil, fmt.Errorf("vocab token %q has id %d", tok, id)
		}
		vocab[tok] = int32(id)
		maxID = max(maxID, id)
	}
	if t.model, err = newBPE(&f.Model, vocab); err != nil {
		return nil, err
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 || a.ID >= maxVocab {
			return nil, fmt.Errorf("added token %q has id %d", a.Content, a.ID)
		}
		at := &AddedToken{ID: a.ID, Content: a.Content, Special: a.Special, SingleWord: a.SingleWord,
			LStrip: a.LStrip, RStrip: a.RStrip, Normalized: a.Normalized}
		t.added = append(t.added, at)
		t.addedByID[a.ID] = at
		t.addedByStr[a.Content] = at
		maxID = max(maxID, a.ID)
	}
	t.idToToken = make([]string, maxID+1)
	for tok, id := range f.Model.Vocab {
		t.idToToken[id] = tok
	}
	t.buildMatchers()
	return t, nil
}

// buildMatchers splits the added tokens into those matched on raw text and
// those matched on normalized text (whose patterns are normalized too). HF
// orders special tokens before the others; with leftmost-longest matching
// the order only breaks ties between identical contents.
func (t *Tokenizer) buildMatchers() {
	var raw, normed []*AddedToken
	for _, special := range []bool{true, false} {
		for _, a := range t.added {
			if a.Special != special {
				continue
			}
			if a.Normalized {
				normed = append(normed, a)
			} else {
				raw = append(raw, a)
			}
		}
	}
	t.rawAdded = newAddedMatcher(raw, func(a *AddedToken) string { return a.Content })
	t.normAdded = newAddedMatcher(normed, func(a *AddedToken) string { return t.normalizeText(a.Content) })
}

func (t *Tokenizer) normalizeText(s string) string {
	for _, f := range t.normalize {
		s = f.String(s)
	}
	return s
}

// Encode returns the ids of text as HF tokenizers' encode(text,
// add_special_tokens=False) does: added tokens written in the text (such as
// <|image_pad|>) become their ids, and nothing is added around the text.
// Invalid UTF-8 is kept byte for byte (each bad byte is a symbol of its own).
func (t *Tokenizer) Encode(text string) []int {
	ids := make([]int, 0, len(text)/3+1)
	var words []string
	for _, seg := range t.rawAdded.split(text, nil) {
		if seg.id >= 0 {
			ids = append(ids, seg.id)
			continue
		}
		for _, sub := range t.normAdded.split(t.normalizeText(seg.text), nil) {
			if sub.id >= 0 {
				ids = append(ids, sub.id)
				continue
			}
			words = t.preTokenize(sub.text, words[:0])
			for _, w := range words {
				ids = t.model.encode(w, ids)
			}
		}
	}
	return ids
}

func (t *Tokenizer) preTokenize(s string, dst []string) []string {
	if s == "" {
		return dst
	}
	pieces := append(dst, s)
	var next []string
	for _, st := range t.preSteps {
		if st.split == nil {
			break
		}
		next = next[:0]
		for _, p := range pieces {
			next = st.split(p, next)
		}
		pieces, next = next, pieces
	}
	return pieces
}

// DecodeBytes returns the bytes the ids stand for, keeping special tokens
// (HF's decode with skip_special_tokens=False, before UTF-8 conversion). Ids
// outside the vocabulary are skipped, as HF does.
func (t *Tokenizer) DecodeBytes(ids []int) []byte {
	out := make([]byte, 0, 4*len(ids))
	for _, id := range ids {
		if tok, ok := t.Token(id); ok {
			out = appendTokenBytes(out, tok)
		}
	}
	return out
}

// Decode returns the text of ids like HF's decode(ids,
// skip_special_tokens=False): bytes that do not form valid UTF-8 (a
// multi-byte character cut between token lists) become U+FFFD.
func (t *Tokenizer) Decode(ids []int) string { return lossyUTF8(t.DecodeBytes(ids)) }

// Token returns the vocabulary string of id (for byte-level tokens, in the
// printable byte alphabet, e.g. "Ġthe").
func (t *Tokenizer) Token(id int) (string, bool) {
	if a, ok := t.addedByID[id]; ok {
		return a.Content, true
	}
	if id < 0 || id >= len(t.idToToken) || t.idToToken[id] == "" {
		return "", false
	}
	return t.idToToken[id], true
}

// TokenID looks up a token string: an added token's content, or a
// vocabulary entry in the byte alphabet.
func (t *Tokenizer) TokenID(token string) (int, bool) {
	if a, ok := t.addedByStr[token]; ok {
		return a.ID, true
	}
	id, ok := t.model.vocab[token]
	return int(id), ok
}

// ID is TokenID for the control tokens a presentation needs; its error
// names the token, for a snapshot whose tokenizer lacks it.
func (t *Tokenizer) ID(token string) (int, error) {
	if id, ok := t.TokenID(token); ok {
		return id, nil
	}
	return 0, fmt.Errorf("tokenizer: token %q is not in this tokenizer.json; is the snapshot a Qwen3-VL text encoder?", token)
}

// AddedTokens returns the added tokens in file order.
func (t *Tokenizer) AddedTokens() []AddedToken {
	out := make([]AddedToken, len(t.added))
	for i, a := range t.added {
		out[i] = *a
	}
	return out
}

// VocabSize is one past the largest id, counting added tokens.
func (t *Tokenizer) VocabSize() int { return len(t.idToToken) }

// configAdded is one entry of tokenizer_config.json's added_tokens_decoder.
type configAdded struct {
	Content    string `json:"content"`
	Special    bool   `json:"special"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
}

// addConfigTokens adds the tokens that tokenizer_config.json beside a
// tokenizer.json declares and the tokenizer.json lacks, as Hugging Face's
// AutoTokenizer does when it loads the folder (MiniMax-H3 extends Qwen3
// with <d>, <|caption_start|> and five more this way). A missing config is
// not an error; a malformed one is.
func (t *Tokenizer) addConfigTokens(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	var cfg struct {
		Decoder map[string]configAdded `json:"added_tokens_decoder"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return &FormatError{Path: path, Err: err}
	}
	ids := make([]int, 0, len(cfg.Decoder))
	for k := range cfg.Decoder {
		id, err := strconv.Atoi(k)
		if err != nil || id < 0 || id >= maxVocab {
			return &FormatError{Path: path, Err: fmt.Errorf("added token id %q", k)}
		}
		ids = append(ids, id)
	}
	sort.Ints(ids)
	grew := false
	for _, id := range ids {
		a := cfg.Decoder[strconv.Itoa(id)]
		if _, ok := t.addedByID[id]; ok || a.Content == "" {
			continue
		}
		if _, ok := t.addedByStr[a.Content]; ok {
			continue
		}
		at := &AddedToken{ID: id, Content: a.Content, Special: a.Special, SingleWord: a.SingleWord,
			LStrip: a.LStrip, RStrip: a.RStrip, Normalized: a.Normalized}
		t.added = append(t.added, at)
		t.addedByID[id] = at
		t.addedByStr[a.Content] = at
		for len(t.idToToken) <= id {
			t.idToToken = append(t.idToToken, "")
		}
		t.idToToken[id] = a.Content
		grew = true
	}
	if grew {
		t.buildMatchers()
	}
	return nil
}
