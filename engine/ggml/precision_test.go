package ggml

import (
	"strings"
	"testing"
)

func TestStorage(t *testing.T) {
	var keep Storage
	if keep.Or(BF16) != BF16 || keep.String() != "default" {
		t.Errorf("zero Storage: Or %s, String %q; want the default and \"default\"", keep.Or(BF16), keep)
	}
	if _, ok := keep.Get(); ok {
		t.Error("zero Storage reports a request")
	}
	// F32 is DType's zero value: requesting it must still count as a request.
	f32 := StoreAs(F32)
	if dt, ok := f32.Get(); !ok || dt != F32 || f32.Or(BF16) != F32 || f32.String() != "f32" {
		t.Errorf("StoreAs(F32): Get %s %v, Or %s, String %q", dt, ok, f32.Or(BF16), f32)
	}
}

func TestPrecisionCheck(t *testing.T) {
	cases := []struct {
		p    Precision
		want string // "" for no error, else a substring
	}{
		{Precision{}, ""},
		{Exact(), ""},
		{Precision{Weights: StoreAs(Q8_0), KV: StoreAs(BF16)}, ""},
		{Precision{Weights: StoreAs(Q4_K)}, "m: cannot store weights as q4_K"},
		{Precision{KV: StoreAs(Q8_0)}, "m: cannot keep attention K/V as q8_0"},
	}
	for _, c := range cases {
		err := c.p.Check("m", F32, BF16, Q8_0)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Check(%v, %v) = %v, want %q", c.p.Weights, c.p.KV, err, c.want)
		}
	}
}
