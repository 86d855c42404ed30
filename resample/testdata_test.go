package resample

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// The reference files are written by tools/resample/gen.py; the inputs are
// not stored but rebuilt here by the same integer formulas (testImage,
// testAudio mirror gen.py's test_image, test_audio), and each case carries
// the SHA-256 of the input the reference saw.

type refCase struct {
	Name        string   `json:"name"`
	Op          string   `json:"op"`
	Src         [2]int   `json:"src"`
	Seed        uint32   `json:"seed"`
	Size        [2]int   `json:"size"`
	Resized     [2]int   `json:"resized"`
	InputSHA256 string   `json:"input_sha256"`
	Out         string   `json:"out"`
	Float       string   `json:"float"`
	OutU8       string   `json:"out_u8"`
	Orig        int      `json:"orig"`
	New         int      `json:"new"`
	Samples     int      `json:"samples"`
	Channels    int      `json:"channels"`
	AudioOut    []string `json:"-"`
	AudioOutT   []string `json:"out_transform"`
}

type refFile struct {
	Versions map[string]string `json:"versions"`
	Cases    []json.RawMessage `json:"cases"`
}

// loadRef reads testdata/name and decodes its cases. Audio cases store one
// base64 string per channel under "out", so they decode into AudioOut.
func loadRef(t *testing.T, name string) (map[string]string, []refCase) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("reference %s missing (make it with tools/resample/gen.py): %v", name, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc refFile
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	cases := make([]refCase, len(doc.Cases))
	for i, raw := range doc.Cases {
		var probe struct {
			Out json.RawMessage `json:"out"`
		}
		if err := json.Unmarshal(raw, &probe); err != nil {
			t.Fatal(err)
		}
		if len(probe.Out) > 0 && probe.Out[0] == '[' {
			var audio struct {
				Out []string `json:"out"`
			}
			if err := json.Unmarshal(raw, &audio); err != nil {
				t.Fatal(err)
			}
			cases[i].AudioOut = audio.Out
			raw = stripOut(t, raw)
		}
		if err := json.Unmarshal(raw, &cases[i]); err != nil {
			t.Fatal(err)
		}
	}
	if len(cases) == 0 {
		t.Fatalf("%s has no cases", name)
	}
	return doc.Versions, cases
}

// stripOut drops the "out" key so the rest decodes into refCase.
func stripOut(t *testing.T, raw json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "out")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustB64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func float32sLE(t *testing.T, s string) []float32 {
	b := mustB64(t, s)
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func bytesOfFloat32s(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func checkSHA(t *testing.T, c refCase, b []byte) {
	t.Helper()
	sum := sha256.Sum256(b)
	if got := hex.EncodeToString(sum[:]); got != c.InputSHA256 {
		t.Fatalf("%s: rebuilt input differs from the one gen.py used (sha256 %s, reference %s)", c.Name, got, c.InputSHA256)
	}
}

// hash32 is gen.py's hash32, in uint32 arithmetic.
func hash32(x, y, c, seed uint32) uint32 {
	h := x*0x9E3779B1 + y*0x85EBCA77 + c*0xC2B2AE3D + seed*0x27D4EB2F
	h ^= h >> 15
	h *= 0x2C1B3C6D
	h ^= h >> 12
	h *= 0x297A2D39
	h ^= h >> 15
	return h
}

// testImage is gen.py's test_image: wrapping gradients, a little noise and
// saturated 8x8 blocks (which make Lanczos lobes clip at both ends).
func testImage(w, h int, seed uint32) RGB {
	p := NewRGB(w, h)
	for y := range h {
		for x := range w {
			for c := range 3 {
				hv := int(hash32(uint32(x), uint32(y), uint32(c), seed))
				v := (x*256/w + y*128/h + c*85 + int(seed)*17) % 256
				v = min(max(v+(hv&7)-4, 0), 255)
				if (x/8+y/8+int(seed))%7 == 0 {
					v = 0
					if hv&1 == 1 {
						v = 255
					}
				}
				p.Pix[(y*w+x)*3+c] = byte(v)
			}
		}
	}
	return p
}

// testAudio is gen.py's test_audio: integer samples scaled by 1/32768.
func testAudio(n, channels int, seed uint32) [][]float32 {
	out := make([][]float32, channels)
	for c := range channels {
		out[c] = make([]float32, n)
		for i := range n {
			saw := ((i*37+c*1000+int(seed))%441)*60 - 13230
			chirp := ((i*i*3+c*7)%1013)*10 - 5065
			noise := int(hash32(uint32(i), uint32(c), 0, seed)&4095) - 2048
			out[c][i] = float32(saw+chirp+noise) / 32768
		}
	}
	return out
}
