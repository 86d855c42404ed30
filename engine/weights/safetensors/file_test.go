package safetensors

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestOpenHandWrittenFile(t *testing.T) {
	// Values and bit patterns from the IEEE 754 / bfloat16 definitions.
	data := []byte{}
	data = binary.LittleEndian.AppendUint32(data, math.Float32bits(1.5))
	data = binary.LittleEndian.AppendUint32(data, math.Float32bits(-2))
	data = binary.LittleEndian.AppendUint16(data, 0x3f80) // bf16 1.0
	data = binary.LittleEndian.AppendUint16(data, 0xc040) // bf16 -3.0
	data = binary.LittleEndian.AppendUint16(data, 0x7bff) // f16 65504
	data = binary.LittleEndian.AppendUint16(data, 0x0001) // f16 2^-24
	hdr := `{"f":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"BF16","shape":[2],"data_offsets":[8,12]},` +
		`"h":{"dtype":"F16","shape":[1,2],"data_offsets":[12,16]}}`
	p := filepath.Join(t.TempDir(), "x.safetensors")
	if err := os.WriteFile(p, rawFile(hdr, data), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string][]float32{"f": {1.5, -2}, "b": {1, -3}, "h": {65504, float32(math.Ldexp(1, -24))}}
	for name, w := range want {
		tn, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("tensor %s missing", name)
		}
		got, err := tn.Float32()
		if err != nil {
			t.Fatal(err)
		}
		for i := range w {
			if got[i] != w[i] {
				t.Errorf("%s[%d] = %v, want %v", name, i, got[i], w[i])
			}
		}
	}
}

func TestWriterAlignmentsGiveIdenticalTensors(t *testing.T) {
	dir := t.TempDir()
	vals := []float32{0.1, -7.25, 3e-5, 1e4, float32(math.Inf(1)), 0}
	for _, al := range []Alignment{Align16, Align8Mod16} {
		w := &Writer{Align: al, Metadata: map[string]string{"format": "pt"}}
		for _, dt := range []DType{F32, BF16, F16} {
			if err := w.AddFloat32("t."+string(dt), dt, []int64{2, 3}, vals); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Add("i", I8, []int64{3}, []byte{1, 2, 255}); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, map[Alignment]string{Align16: "a.safetensors", Align8Mod16: "u.safetensors"}[al])
		if err := w.WriteFile(p); err != nil {
			t.Fatal(err)
		}
	}
	a, err := Open(filepath.Join(dir, "a.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	u, err := Open(filepath.Join(dir, "u.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	if a.DataOffset%16 != 0 || u.DataOffset%16 != 8 || !a.Aligned16() || u.Aligned16() {
		t.Fatalf("data offsets %d and %d, want 0 and 8 mod 16", a.DataOffset, u.DataOffset)
	}
	for _, name := range a.Names() {
		ta, _ := a.Tensor(name)
		tu, ok := u.Tensor(name)
		if !ok || !bytes.Equal(ta.Data, tu.Data) || ta.DType != tu.DType {
			t.Errorf("tensor %s differs between alignments", name)
		}
	}
	bf, _ := u.Tensor("t.BF16")
	got, _ := bf.Float32()
	for i, v := range vals {
		if rel := math.Abs(float64(got[i]-v)) / math.Max(math.Abs(float64(v)), 1e-30); !math.IsInf(float64(v), 0) && rel > 1.0/256 {
			t.Errorf("bf16 round trip of %v gave %v", v, got[i])
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("writer left %d files, want 2 (no temporaries)", len(entries))
	}
}

func TestHalfConversionsExhaustive(t *testing.T) {
	// Every finite f16 and bf16 value must survive widen-then-narrow.
	for h := 0; h < 1<<16; h++ {
		f := F16ToF32(uint16(h))
		if !math.IsNaN(float64(f)) && F32ToF16(f) != uint16(h) {
			t.Fatalf("f16 %#04x -> %v -> %#04x", h, f, F32ToF16(f))
		}
		g := BF16ToF32(uint16(h))
		if !math.IsNaN(float64(g)) && F32ToBF16(g) != uint16(h) {
			t.Fatalf("bf16 %#04x -> %v -> %#04x", h, g, F32ToBF16(g))
		}
	}
	// Ties round to even: 1 + 2^-11 lies halfway between two halves.
	if F32ToF16(1+float32(math.Ldexp(1, -11))) != 0x3c00 || F32ToF16(65520) != 0x7c00 {
		t.Fatal("f16 rounding is not round-to-nearest-even with overflow to inf")
	}
	if F32ToBF16(1+float32(math.Ldexp(1, -8))) != 0x3f80 || F32ToBF16(1+3*float32(math.Ldexp(1, -8))) != 0x3f82 {
		t.Fatal("bf16 rounding is not round-to-nearest-even")
	}
}

func TestSetFromIndex(t *testing.T) {
	dir := t.TempDir()
	for i, names := range [][]string{{"a", "b"}, {"c"}} {
		w := &Writer{Align: Align8Mod16}
		for _, n := range names {
			if err := w.AddFloat32(n, F32, []int64{1}, []float32{float32(i)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.WriteFile(filepath.Join(dir, []string{"s1.safetensors", "s2.safetensors"}[i])); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteIndex(dir, []string{"s1.safetensors", "s2.safetensors"}); err != nil {
		t.Fatal(err)
	}
	s, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := s.Tensor("c")
	v, _ := c.Float32()
	if !ok || v[0] != 1 || len(s.Names()) != 3 {
		t.Fatalf("set lookup failed: %v %v %v", ok, v, s.Names())
	}
	s.Close()
	os.Remove(filepath.Join(dir, "s2.safetensors"))
	if _, err := OpenDir(dir); err == nil {
		t.Fatal("index with a missing shard opened")
	}
}
