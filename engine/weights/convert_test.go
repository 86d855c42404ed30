package weights

import (
	"math"
	"path/filepath"
	"testing"

	"h3studio/engine/ggml"
)

// TestConvertTinyLoadsThroughSameCode converts the tiny snapshot to q8_0
// and q4_K, rediscovers it, and loads the DiT module through LoadModule:
// quantized matrices must come back within the format's error, vectors
// and F32 islands exactly, and the QKV layout must survive.
func TestConvertTinyLoadsThroughSameCode(t *testing.T) {
	root := t.TempDir()
	in := filepath.Join(root, "tiny")
	if err := WriteTiny(in, TinyOptions{Seed: 5}); err != nil {
		t.Fatal(err)
	}
	b := cpuBackend(t)
	ref := newTinyDiT()
	refSrc := openComponent(t, in, Transformer)
	refMod, err := LoadModule(b, refSrc, ref, LoadOptions{Dims: tinyDims(), Store: func(info TensorInfo) (ggml.DType, error) { return ggml.F32, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer refMod.Free()
	for _, tc := range []struct {
		to     ggml.DType
		relTol float64
	}{{ggml.Q8_0, 0.01}, {ggml.Q4_K, 0.01}} {
		out := filepath.Join(root, "tiny-"+tc.to.String())
		var last int64
		err := Convert(in, out, ConvertOptions{To: tc.to, Progress: func(done, total int64, _ string) {
			if done < last || done > total {
				t.Errorf("progress %d of %d after %d", done, total, last)
			}
			last = done
		}})
		if err != nil {
			t.Fatal(err)
		}
		snap, err := Discover(out)
		if err != nil {
			t.Fatal(err)
		}
		if q := snap.Partitions[1].Component(Transformer).QKV; q != QKVInterleaved {
			t.Fatalf("converted QKV layout %q", q)
		}
		src := openComponent(t, out, Transformer)
		// The tiny rows (64) are not whole q4_K blocks (256): those
		// matrices fall back to q8_0, as the real AdaLN rows (2688) do.
		qi, _ := src.Lookup("blocks.0.attn.qkv_proj.weight")
		if qi.DType != Q8_0 {
			t.Fatalf("qkv_proj stored as %s, want Q8_0", qi.DType)
		}
		m := newTinyDiT()
		mod, err := LoadModule(b, src, m, LoadOptions{Dims: tinyDims()})
		if err != nil {
			t.Fatal(err)
		}
		relErr := func(a, b []float32) float64 {
			var num, den float64
			for i := range a {
				num += float64((a[i] - b[i]) * (a[i] - b[i]))
				den += float64(b[i] * b[i])
			}
			return math.Sqrt(num / den)
		}
		e := relErr(m.Blocks[1].Attn.QKV.F32(), ref.Blocks[1].Attn.QKV.F32())
		t.Logf("%s: qkv_proj relative L2 error %.4f; %d bytes written of %d", tc.to, e, last, last)
		if e > tc.relTol || e == 0 {
			t.Errorf("%s: qkv relative error %.4f, want (0, %.2f]", tc.to, e, tc.relTol)
		}
		if relErr(m.VideoIn.F32(), ref.VideoIn.F32()) != 0 || relErr(m.Blocks[0].Norm1.F32(), ref.Blocks[0].Norm1.F32()) != 0 {
			t.Errorf("%s: F32 islands or vectors changed", tc.to)
		}
		mod.Free()
	}
}

func openComponent(t *testing.T, dir, comp string) Source {
	snap, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	src, err := snap.Partitions[0].Component(comp).Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}
