package tokenizer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "regenerate testdata/*.golden from the JavaScript reference in tools/tokref")

var goldenPath = filepath.Join("testdata", "qwen3.golden")

type goldenCase struct {
	Text string `json:"text"`
	IDs  []int  `json:"ids"`
}

// TestGoldenQwen3 checks the corpus against ids the JavaScript reference
// produced (one JSON object per line). Regenerate with
// go test ./engine/tokenizer -run Golden -update; the ids always come from
// tools/tokref, never from this package.
func TestGoldenQwen3(t *testing.T) {
	corpus := loadCorpus(t)
	if *update {
		ref := runTokref(t, tokrefRequest{Texts: corpus})
		var buf bytes.Buffer
		for i, text := range corpus {
			line, err := json.Marshal(goldenCase{Text: text, IDs: ref.IDs[i]})
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(append(line, '\n'))
		}
		tmp := goldenPath + ".tmp"
		if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, goldenPath); err != nil {
			t.Fatal(err)
		}
	}
	cases := readGolden(t)
	if len(cases) != len(corpus) {
		t.Fatalf("%s has %d cases for %d corpus texts; run go test ./engine/tokenizer -run Golden -update", goldenPath, len(cases), len(corpus))
	}
	tok := qwen3(t)
	for i, c := range cases {
		if c.Text != corpus[i] {
			t.Fatalf("%s case %d is %q, corpus has %q; run go test ./engine/tokenizer -run Golden -update", goldenPath, i, c.Text, corpus[i])
		}
		compareIDs(t, goldenPath, c.Text, tok.Encode(c.Text), c.IDs)
	}
}

func readGolden(t *testing.T) []goldenCase {
	f, err := os.Open(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []goldenCase
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c goldenCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", goldenPath, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
