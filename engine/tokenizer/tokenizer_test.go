package tokenizer

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestControlTokenIDs: the ids H3's presentation uses are those the
// reference encodes the token strings to, and Token inverts them.
func TestControlTokenIDs(t *testing.T) {
	tok := qwen3(t)
	names := []string{EndOfText, VisionStart, VisionEnd, ImagePad, VideoPad}
	ref := runTokref(t, tokrefRequest{Texts: names})
	for i, name := range names {
		id, err := tok.ID(name)
		if err != nil {
			t.Fatal(err)
		}
		if len(ref.IDs[i]) != 1 || id != ref.IDs[i][0] {
			t.Errorf("ID(%q) = %d, reference encodes it as %v", name, id, ref.IDs[i])
		}
		if s, ok := tok.Token(id); !ok || s != name {
			t.Errorf("Token(%d) = %q, %v; want %q", id, s, ok, name)
		}
	}
	if _, err := tok.ID("<|no_such_token|>"); err == nil || !strings.Contains(err.Error(), "<|no_such_token|>") {
		t.Errorf("ID of a missing token: err = %v", err)
	}
	if id, ok := tok.TokenID("Ġthe"); !ok || tok.Decode([]int{id}) != " the" {
		t.Errorf("TokenID(Ġthe) = %d, %v; decodes to %q", id, ok, tok.Decode([]int{id}))
	}
	if got, want := tok.VocabSize(), len(tok.idToToken); got != want || got < 151669 {
		t.Errorf("VocabSize = %d", got)
	}
}

func TestLoadFolder(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "tiny_qwen.json"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	fromDir, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	fromFile := loadTestdata(t, "tiny_qwen.json")
	text := "<mask> a red fox, Ångström 42"
	if a, b := fromDir.Encode(text), fromFile.Encode(text); !slices.Equal(a, b) {
		t.Errorf("folder %v, file %v", a, b)
	}
}

// TestLoadErrors: a bad or unsupported file gets one error naming the file
// and the problem.
func TestLoadErrors(t *testing.T) {
	const bl = `"pre_tokenizer":{"type":"ByteLevel"},"decoder":{"type":"ByteLevel"}`
	const vocab = `"vocab":{"a":0,"b":1,"ab":2}`
	cases := []struct {
		name, json, want string
		unsupported      bool
	}{
		{"not json", `{"model":`, "not a tokenizer.json", false},
		{"wordpiece", `{"model":{"type":"WordPiece",` + vocab + `},` + bl + `}`, `model type "WordPiece"`, true},
		{"empty vocab", `{"model":{"type":"BPE","vocab":{},"merges":[]},` + bl + `}`, "vocab is empty", false},
		{"merge token missing", `{"model":{"type":"BPE",` + vocab + `,"merges":["a c"]},` + bl + `}`, `merge 1 ("a" "c")`, false},
		{"merge result missing", `{"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":[["a","b"]]},` + bl + `}`, `makes "ab"`, false},
		{"bad merge line", `{"model":{"type":"BPE",` + vocab + `,"merges":["a b c"]},` + bl + `}`, "not two space-separated tokens", false},
		{"dropout", `{"model":{"type":"BPE","dropout":0.1,` + vocab + `,"merges":[]},` + bl + `}`, "dropout", true},
		{"unk missing", `{"model":{"type":"BPE","unk_token":"<unk>",` + vocab + `,"merges":[]},` + bl + `}`, `unk_token "<unk>"`, false},
		{"huge id", `{"model":{"type":"BPE","vocab":{"a":2000000000},"merges":[]},` + bl + `}`, "has id 2000000000", false},
		{"regex", `{"model":{"type":"BPE",` + vocab + `,"merges":[]},"pre_tokenizer":{"type":"Split","pattern":{"Regex":"\\w+"},"behavior":"Isolated"},"decoder":{"type":"ByteLevel"}}`, `Split regex "\\w+"`, true},
		{"no byte level", `{"model":{"type":"BPE",` + vocab + `,"merges":[]},"pre_tokenizer":{"type":"Whitespace"},"decoder":{"type":"ByteLevel"}}`, "pre-tokenizer Whitespace", true},
		{"decoder", `{"model":{"type":"BPE",` + vocab + `,"merges":[]},"pre_tokenizer":{"type":"ByteLevel"},"decoder":{"type":"WordPiece"}}`, "decoder WordPiece", true},
		{"normalizer", `{"normalizer":{"type":"Lowercase"},"model":{"type":"BPE",` + vocab + `,"merges":[]},` + bl + `}`, "normalizer Lowercase", true},
	}
	dir := t.TempDir()
	for _, c := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".json")
		if err := os.WriteFile(path, []byte(c.json), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path)
		if err == nil {
			t.Errorf("%s: loaded without error", c.name)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, path) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q should name %s and say %q on one line", c.name, msg, path, c.want)
		}
		var fe *FormatError
		var ue *UnsupportedError
		if !errors.As(err, &fe) || errors.As(err, &ue) != c.unsupported {
			t.Errorf("%s: error %T (unsupported %v)", c.name, err, errors.As(err, &ue))
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: %v", err)
	}
}

// speedTexts are ~100k-token inputs: an H3 presentation (labels, vision
// pads, prompt text) and plain prose with no added tokens.
func speedTexts(t testing.TB) map[string]string {
	corpus := loadCorpus(t)
	var prose strings.Builder
	for i := 0; prose.Len() < 450000; i++ {
		if c := corpus[(i*11)%len(corpus)]; !strings.Contains(c, "<|") {
			prose.WriteString(c)
			prose.WriteString(" ")
			prose.WriteString(strings.Repeat("x", i%7))
		}
	}
	return map[string]string{"presentation": presentation(corpus, 800000), "prose": prose.String()}
}

// TestEncodeSpeed logs throughput with a cold and a warm BPE cache
// (BenchmarkEncode measures it properly).
func TestEncodeSpeed(t *testing.T) {
	tok := qwen3(t)
	for name, text := range speedTexts(t) {
		tok.model.resetCache()
		start := time.Now()
		n := len(tok.Encode(text))
		cold := time.Since(start)
		start = time.Now()
		tok.Encode(text)
		warm := time.Since(start)
		t.Logf("%s, %d tokens: cold cache %v (%.2f M tokens/s), warm %v (%.2f M tokens/s)",
			name, n, cold, float64(n)/cold.Seconds()/1e6, warm, float64(n)/warm.Seconds()/1e6)
	}
}

// BenchmarkEncode: go test ./engine/tokenizer -run '^$' -bench Encode
func BenchmarkEncode(b *testing.B) {
	tok := qwen3(b)
	for name, text := range speedTexts(b) {
		for _, cache := range []string{"cold", "warm"} {
			b.Run(name+"/"+cache, func(b *testing.B) {
				n := 0
				b.SetBytes(int64(len(text)))
				for b.Loop() {
					if cache == "cold" {
						tok.model.resetCache()
					}
					n = len(tok.Encode(text))
				}
				b.ReportMetric(float64(n), "tokens")
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

func (b *bpeModel) resetCache() {
	b.mu.Lock()
	b.cache = map[string][]int32{}
	b.mu.Unlock()
}

// TestConcurrentEncode: the shared BPE cache keeps concurrent encodings
// equal to sequential ones (run with -race).
func TestConcurrentEncode(t *testing.T) {
	tok := loadTestdata(t, "tiny_qwen.json")
	texts := append(loadCorpus(t), randomTexts(3, 200)...)
	want := make([][]int, len(texts))
	for i, s := range texts {
		want[i] = tok.Encode(s)
	}
	tok.model.resetCache()
	errs := make(chan string, 4)
	for g := 0; g < 4; g++ {
		go func(g int) {
			for k := range texts {
				i := (k*7 + g*13) % len(texts)
				if got := tok.Encode(texts[i]); !slices.Equal(got, want[i]) {
					errs <- texts[i]
					return
				}
			}
			errs <- ""
		}(g)
	}
	for g := 0; g < 4; g++ {
		if s := <-errs; s != "" {
			t.Errorf("concurrent Encode(%q) differs from sequential", s)
		}
	}
}
