package gguf

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// handGGUF builds a GGUF v3 file byte by byte from the format description
// (independent of Writer): one key, one Q8_0 tensor of one block and one
// F32 tensor.
func handGGUF() ([]byte, []float32) {
	le := binary.LittleEndian
	var b []byte
	str := func(s string) { b = le.AppendUint64(b, uint64(len(s))); b = append(b, s...) }
	b = append(b, "GGUF"...)
	b = le.AppendUint32(b, 3)
	b = le.AppendUint64(b, 2) // tensors
	b = le.AppendUint64(b, 1) // keys
	str("general.architecture")
	b = le.AppendUint32(b, tString)
	str("minimax_h3")
	str("q")
	b = le.AppendUint32(b, 1)
	b = le.AppendUint64(b, 32)
	b = le.AppendUint32(b, uint32(Q8_0))
	b = le.AppendUint64(b, 0)
	str("f")
	b = le.AppendUint32(b, 2)
	b = le.AppendUint64(b, 2)
	b = le.AppendUint64(b, 1)
	b = le.AppendUint32(b, uint32(F32))
	b = le.AppendUint64(b, 64) // 34 bytes of q8_0 padded to 64
	for len(b)%32 != 0 {
		b = append(b, 0)
	}
	// Q8_0 block: f16 scale 0.5 (0x3800) then 32 int8 quants -16..15.
	b = le.AppendUint16(b, 0x3800)
	want := make([]float32, 32)
	for i := 0; i < 32; i++ {
		b = append(b, byte(int8(i-16)))
		want[i] = 0.5 * float32(i-16)
	}
	b = append(b, make([]byte, 30)...)
	b = le.AppendUint32(b, math.Float32bits(1.25))
	b = le.AppendUint32(b, math.Float32bits(-3))
	return b, want
}

func TestParseHandBuilt(t *testing.T) {
	raw, want := handGGUF()
	g, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if g.String("general.architecture") != "minimax_h3" || len(g.Tensors) != 2 {
		t.Fatalf("kv %v tensors %v", g.KV, g.Tensors)
	}
	info, q, ok := g.Tensor("q")
	if !ok || info.Type != Q8_0 || info.Bytes != 34 {
		t.Fatalf("q8_0 tensor %+v", info)
	}
	scale := float32(0.5) // f16 0x3800
	if binary.LittleEndian.Uint16(q) != 0x3800 {
		t.Fatal("q8_0 scale bytes moved")
	}
	for i, w := range want {
		if got := scale * float32(int8(q[2+i])); got != w {
			t.Fatalf("q[%d] = %v, want %v", i, got, w)
		}
	}
	info, f, _ := g.Tensor("f")
	if info.Dims[0] != 2 || math.Float32frombits(binary.LittleEndian.Uint32(f[4:])) != -3 {
		t.Fatalf("f32 tensor %+v %v", info, f)
	}
}

func TestParseRejects(t *testing.T) {
	raw, _ := handGGUF()
	mutate := func(f func([]byte) []byte) []byte { c := append([]byte(nil), raw...); return f(c) }
	cases := map[string][]byte{
		"bad magic":        mutate(func(b []byte) []byte { b[0] = 'X'; return b }),
		"truncated header": raw[:40],
		"truncated data":   raw[:len(raw)-4],
		"huge tensor count": mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[8:], 1<<40)
			return b
		}),
		"huge string": mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[24:], 1<<40)
			return b
		}),
		"unsupported type": mutate(func(b []byte) []byte {
			i := strings.Index(string(b), "q\x01\x00\x00\x00") + 1 + 4 + 8
			binary.LittleEndian.PutUint32(b[i:], 99) // not a ggml type
			return b
		}),
	}
	for name, b := range cases {
		if _, err := Parse(b); err == nil {
			t.Errorf("%s: accepted", name)
		} else {
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("%s: %v is not a *FormatError", name, err)
			}
		}
	}
}

func TestWriterRoundTrip(t *testing.T) {
	w := &Writer{}
	w.SetString("general.architecture", "minimax_h3")
	w.SetString("h3studio.qkv_layout", "interleaved")
	w.SetUint32("h3studio.version", 1)
	data := map[string][]byte{"a": make([]byte, 3*64*2), "b": make([]byte, 34*2), "c": make([]byte, 144)}
	for k, v := range data {
		for i := range v {
			v[i] = byte(i*7 + len(k))
		}
	}
	if err := w.Add("a", BF16, []int64{64, 3}, data["a"]); err != nil {
		t.Fatal(err)
	}
	if err := w.Add("b", Q8_0, []int64{64}, data["b"]); err != nil {
		t.Fatal(err)
	}
	if err := w.Add("c", Q4_K, []int64{256}, data["c"]); err != nil {
		t.Fatal(err)
	}
	if err := w.Add("bad", Q4_K, []int64{100}, data["c"]); err == nil {
		t.Fatal("q4_K row of 100 accepted")
	}
	p := filepath.Join(t.TempDir(), "x.gguf")
	if err := w.WriteFile(p); err != nil {
		t.Fatal(err)
	}
	g, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.String("h3studio.qkv_layout") != "interleaved" || g.KV["h3studio.version"] != uint64(1) {
		t.Fatalf("kv %v", g.KV)
	}
	for name, want := range data {
		_, got, ok := g.Tensor(name)
		if !ok || string(got) != string(want) {
			t.Fatalf("tensor %s did not survive the round trip", name)
		}
	}
	if g.DataOffset%DefaultAlignment != 0 {
		t.Fatalf("data offset %d not aligned", g.DataOffset)
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("%d files left, want 1", len(entries))
	}
}

func FuzzParse(f *testing.F) {
	raw, _ := handGGUF()
	f.Add(raw)
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		g, err := Parse(b)
		if err != nil {
			return
		}
		for _, ti := range g.Tensors {
			if _, data, ok := g.Tensor(ti.Name); !ok || int64(len(data)) != ti.Bytes {
				t.Fatalf("accepted tensor %s without its bytes", ti.Name)
			}
		}
	})
}
