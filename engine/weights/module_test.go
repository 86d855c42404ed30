package weights

import (
	"path/filepath"
	"strings"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
)

// tinyDiTCore mirrors the DiT block's core weights with shape tags.
type tinyDiTCore struct {
	Norm1 *ggml.Tensor `st:"norm1.weight" shape:"hidden"`
	Norm2 *ggml.Tensor `st:"norm2.weight" shape:"hidden"`
	Attn  struct {
		QKV   *ggml.Tensor `st:"qkv_proj.weight" shape:"inner3,hidden"`
		Out   *ggml.Tensor `st:"out_proj.weight" shape:"hidden,inner"`
		QNorm *ggml.Tensor `st:"q_norm.weight" shape:"head_dim"`
		KNorm *ggml.Tensor `st:"k_norm.weight" shape:"head_dim"`
	} `st:"attn"`
	MLP struct {
		FC1 *ggml.Tensor `st:"fc1.weight" shape:"ffn2,hidden"`
		FC2 *ggml.Tensor `st:"fc2.weight" shape:"hidden,ffn"`
	} `st:"mlp"`
}

type tinyDiT struct {
	VideoIn *ggml.Tensor  `st:"video_patch_proj.weight" shape:"hidden,96"`
	InvFreq *ggml.Tensor  `st:"rope.inv_freq" shape:"4"`
	Blocks  []tinyDiTCore `st:"blocks"`
	Refiner struct {
		Blocks []tinyDiTCore `st:"blocks"`
		Final  *ggml.Tensor  `st:"final_norm.weight"`
	} `st:"token_refiner"`
}

func tinyDims() map[string]int64 {
	c := arch.TinyDiT()
	return map[string]int64{"hidden": int64(c.Hidden), "inner": int64(c.Inner()),
		"inner3": 3 * int64(c.Inner()), "head_dim": int64(c.HeadDim),
		"ffn": int64(c.FFN), "ffn2": 2 * int64(c.FFN)}
}

func newTinyDiT() *tinyDiT {
	m := &tinyDiT{Blocks: make([]tinyDiTCore, 2)}
	m.Refiner.Blocks = make([]tinyDiTCore, 2)
	return m
}

func openTinyDiT(t *testing.T, aligned bool) Source {
	dir := filepath.Join(t.TempDir(), "tiny")
	if err := WriteTiny(dir, TinyOptions{Seed: 3, Aligned16: aligned}); err != nil {
		t.Fatal(err)
	}
	s, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.Partitions[0].Component(Transformer).Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func TestLoadModuleAlignedAndUnalignedAgree(t *testing.T) {
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var loaded [2]*tinyDiT
	var mods [2]*Module
	for i, aligned := range []bool{false, true} {
		m := newTinyDiT()
		mod, err := LoadModule(b, openTinyDiT(t, aligned), m, LoadOptions{Dims: tinyDims()})
		if err != nil {
			t.Fatal(err)
		}
		defer mod.Free()
		loaded[i], mods[i] = m, mod
		t.Logf("aligned16=%v: %d bytes mapped zero-copy, %d copied", aligned, mod.Mapped, mod.Copied)
	}
	if mods[0].Mapped != 0 || mods[0].Copied == 0 {
		t.Errorf("8-mod-16 shards: mapped %d, copied %d; nothing can be mapped", mods[0].Mapped, mods[0].Copied)
	}
	if mods[1].Mapped == 0 {
		t.Errorf("16-aligned shards: nothing was placed zero-copy")
	}
	pairs := [][2]*ggml.Tensor{
		{loaded[0].VideoIn, loaded[1].VideoIn}, {loaded[0].InvFreq, loaded[1].InvFreq},
		{loaded[0].Blocks[1].Attn.QKV, loaded[1].Blocks[1].Attn.QKV},
		{loaded[0].Refiner.Blocks[0].MLP.FC1, loaded[1].Refiner.Blocks[0].MLP.FC1},
		{loaded[0].Refiner.Final, loaded[1].Refiner.Final},
	}
	for _, p := range pairs {
		a, c := p[0].F32(), p[1].F32()
		if len(a) != len(c) || len(a) == 0 {
			t.Fatalf("%s: %d vs %d values", p[0].Name(), len(a), len(c))
		}
		for i := range a {
			if a[i] != c[i] {
				t.Fatalf("%s[%d]: %v (unaligned) vs %v (aligned)", p[0].Name(), i, a[i], c[i])
			}
		}
	}
}

func TestLoadModuleReportsEveryProblem(t *testing.T) {
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var bad struct {
		A *ggml.Tensor `st:"blocks.0.attn.nope.weight"`
		B *ggml.Tensor `st:"blocks.1.attn.qkv_proj.weight" shape:"hidden,hidden"`
		C *ggml.Tensor `st:"no_such_tensor"`
		D *ggml.Tensor `st:"rope.inv_freq"`
	}
	_, err = LoadModule(b, openTinyDiT(t, false), &bad, LoadOptions{Dims: tinyDims()})
	if err == nil {
		t.Fatal("bad module loaded")
	}
	for _, want := range []string{"missing blocks.0.attn.nope.weight", "blocks.1.attn.qkv_proj.weight: shape [288 64], want [64 64]", "missing no_such_tensor"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if bad.D != nil {
		t.Error("a failed load bound a tensor")
	}
}
