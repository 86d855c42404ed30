package vae

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"h3studio/engine/ggml"
)

// TestDecodeBenchPlacesTheCheckpoint: the bench's seeded decoder has
// every weight LoadVideoDecoder places from gen.py's checkpoint, with the
// same dtype and shape (f16 matrices, everything else f32), so the bench
// times the graphs a render builds; and it decodes the latent it is asked
// for in the calls the tiling makes.
func TestDecodeBenchPlacesTheCheckpoint(t *testing.T) {
	o := DecodeOptions{Precision: ggml.Precision{Weights: ggml.StoreAs(ggml.F16)}}
	loaded := loadTestDecoder(t, o)
	db, err := NewDecodeBench(parityBackend(t), loaded.cfg, ggml.F16, 1, o)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want, got := tensorsOf(loaded.net), tensorsOf(db.d.net)
	if len(got) != len(want) || db.Bytes() != loaded.WeightBytes() {
		t.Fatalf("bench has %d weights (%d B), the checkpoint loads %d (%d B)", len(got), db.Bytes(), len(want), loaded.WeightBytes())
	}
	for name, w := range want {
		g := got[name]
		if g == nil || g.DType() != w.DType() || fmt.Sprint(g.Shape()) != fmt.Sprint(w.Shape()) {
			t.Errorf("%s: bench %v, checkpoint %s %v", name, g, w.DType(), w.Shape())
		}
	}
	// 48x64 pixels at the fixture's 32-px tiles with 16-px overlaps: 2 x 3
	// tiles of one 7-latent chunk (gen.py's video_decode_tiled case).
	if _, err := db.Run(context.Background(), 7, 3, 4); err != nil {
		t.Fatal(err)
	}
	if db.Calls() != 6 || db.Tile() != 32 || db.Frames(7) != 22 {
		t.Errorf("%d calls of %d-px tiles, %d frames; want 6 of 32 px, 22 frames", db.Calls(), db.Tile(), db.Frames(7))
	}
}

// tensorsOf maps the decoder's weight fields (blocks by index) to their
// tensors.
func tensorsOf(d *videoDecoder) map[string]*ggml.Tensor {
	out := map[string]*ggml.Tensor{}
	add := func(prefix string, v reflect.Value) {
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if t, ok := v.Field(i).Interface().(*ggml.Tensor); ok {
				out[prefix+v.Type().Field(i).Name] = t
			}
		}
	}
	add("", reflect.ValueOf(d).Elem())
	for i := range d.Blocks {
		add(fmt.Sprintf("block%d.", i), reflect.ValueOf(&d.Blocks[i]).Elem())
	}
	return out
}
