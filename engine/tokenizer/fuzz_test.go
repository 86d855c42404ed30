package tokenizer

import (
	"bytes"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"golang.org/x/text/unicode/norm"
)

// maxFuzzText caps fuzz inputs as image/png's fuzz test caps image sizes.
const maxFuzzText = 4096

func addTextSeeds(f *testing.F) {
	var corpus []string
	readJSON(f, filepath.Join("testdata", "corpus.json"), &corpus)
	for _, s := range corpus {
		f.Add(s)
	}
	for _, s := range []string{"\xff", "a\xc3", "\xe2\x82 x", "'\xff's", "<|image_pad|>\u0301", "\xed\xa0\x80"} {
		f.Add(s)
	}
}

// FuzzEncodeQwen3: encoding never panics, is deterministic, yields ids the
// vocabulary knows, and decodes back to the input bytes. Qwen3's added
// tokens strip nothing and its normalizer is NFC, so the bytes round-trip
// exactly for NFC input, invalid UTF-8 included.
func FuzzEncodeQwen3(f *testing.F) {
	addTextSeeds(f)
	tok := qwen3(f)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > maxFuzzText {
			return
		}
		ids := tok.Encode(s)
		for _, id := range ids {
			if _, ok := tok.Token(id); !ok {
				t.Fatalf("Encode(%q) gave id %d, which has no token", s, id)
			}
		}
		if again := tok.Encode(s); !slices.Equal(ids, again) {
			t.Fatalf("Encode(%q) is not deterministic: %v then %v", s, ids, again)
		}
		if !norm.NFC.IsNormalString(s) {
			s = norm.NFC.String(s)
			ids = tok.Encode(s)
		}
		if got := tok.DecodeBytes(ids); !bytes.Equal(got, []byte(s)) {
			t.Fatalf("DecodeBytes(Encode(%q)) = %q", s, got)
		}
	})
}

// FuzzEncodeTiny runs the same checks on a small tokenizer HF trained with
// the Qwen schema plus added tokens with single_word/lstrip/rstrip, where
// whitespace next to a stripping token is dropped, so only the no-panic and
// determinism properties hold in general.
func FuzzEncodeTiny(f *testing.F) {
	addTextSeeds(f)
	f.Add("Hi <mask> there\t<mask>\t<mask>\u2000 x [SEP]")
	tok := loadTestdata(f, "tiny_qwen.json")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > maxFuzzText {
			return
		}
		ids := tok.Encode(s)
		if again := tok.Encode(s); !slices.Equal(ids, again) {
			t.Fatalf("Encode(%q) is not deterministic: %v then %v", s, ids, again)
		}
		_ = tok.Decode(ids)
	})
}

// FuzzParse feeds mutated tokenizer.json files to the loader: it must
// return an error or a usable tokenizer, never panic or allocate without
// bound.
func FuzzParse(f *testing.F) {
	// Small seeds: the fuzzer minimizes every new input it finds, which
	// takes minutes on a full tiny_*.json.
	f.Add([]byte(`{"added_tokens":[{"id":4,"content":"<mask>","single_word":true,"lstrip":true,"rstrip":true,"normalized":false,"special":false},` +
		`{"id":5,"content":"wö","normalized":true}],"normalizer":{"type":"NFC"},"pre_tokenizer":{"type":"Sequence","pretokenizers":[` +
		`{"type":"Split","pattern":{"Regex":` + strconv.Quote(patternQwen2) + `},"behavior":"Isolated","invert":false},` +
		`{"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]},"decoder":{"type":"ByteLevel"},` +
		`"model":{"type":"BPE","ignore_merges":false,"vocab":{"H":0,"e":1,"He":2,"Ġ":3},"merges":[["H","e"]]}}`))
	f.Add([]byte(`{"pre_tokenizer":{"type":"ByteLevel","add_prefix_space":true},"decoder":{"type":"ByteLevel"},` +
		`"model":{"type":"BPE","unk_token":"u","fuse_unk":true,"continuing_subword_prefix":"#","vocab":{"u":0,"l":1,"#l":2,"l#l":3},"merges":["l #l"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		tok, err := Parse(data)
		if err != nil {
			return
		}
		ids := tok.Encode("Hello <mask> wörld 123 \n\n")
		_ = tok.Decode(ids)
	})
}
