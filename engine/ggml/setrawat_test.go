//go:build cgo

package ggml

import (
	"bytes"
	"testing"
)

// A weight written in pieces at offsets reads back byte for byte, and a
// piece that would run past the tensor panics in Go instead of reaching C.
func TestSetRawAtPieces(t *testing.T) {
	b, err := NewBackend(BackendOptions{Device: DeviceCPU})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ws := b.NewWeightSet(1)
	defer ws.Free()
	w := ws.Add("w", F32, 1000, 3)
	if err := ws.Alloc(); err != nil {
		t.Fatal(err)
	}
	want := make([]byte, w.NBytes())
	for i := range want {
		want[i] = byte(i*7 + i/251)
	}
	for off := 0; off < len(want); off += 4096 {
		w.SetRawAt(want[off:min(off+4096, len(want))], off)
	}
	if got := w.Raw(); !bytes.Equal(got, want) {
		t.Fatal("bytes written in pieces differ from what was read back")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("out-of-range piece did not panic")
		}
	}()
	w.SetRawAt(make([]byte, 8), w.NBytes()-4)
}
