package weights

import (
	"fmt"
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

// part is a module whose widths only its instance knows.
type part struct {
	W       *ggml.Tensor `st:"weight" shape:"out,in" ggml:"in,1,out"`
	B       *ggml.Tensor `st:"bias" shape:"out" ggml:"1,out" transform:"double"`
	in, out int64
}

func (p *part) Dims() map[string]int64 { return map[string]int64{"in": p.in, "out": p.out} }

type normOnly struct {
	Norm *ggml.Tensor `st:"norm1.weight" shape:"hidden" ggml:"1,hidden"`
}

// tinyParts reads tiny DiT tensors through the features the VAEs use:
// instance dims, a transform, backend shapes, numbering from first, a
// {name} placeholder and nil and non-nil module pointers.
type tinyParts struct {
	Audio  *part        `st:"audio_patch_proj"`
	Skip   *part        `st:"no_such_module"`
	Blocks []normOnly   `st:"blocks" first:"1"`
	Last   *ggml.Tensor `st:"blocks.{last}.norm2.weight"`
	last   int64
}

func (t *tinyParts) Dims() map[string]int64 { return map[string]int64{"last": t.last} }

func TestLoadModuleTransformsAndDims(t *testing.T) {
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	src := openTinyDiT(t, false)
	double := func(src Source, name string, want []int64) ([]float32, error) {
		v, err := ReadFloat32(src, name, want)
		for i := range v {
			v[i] *= 2
		}
		return v, err
	}
	opts := LoadOptions{Dims: tinyDims(), Transforms: map[string]Transform{"double": double}}
	m := tinyParts{Audio: &part{in: 32, out: 64}, last: 1}
	m.Blocks = make([]normOnly, 1)
	mod, err := LoadModule(b, src, &m, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer mod.Free()
	stored := func(name string) []float32 {
		v, err := Float32(src, name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	bias := stored("audio_patch_proj.bias")
	for i := range bias {
		bias[i] *= 2
	}
	for _, c := range []struct {
		t     *ggml.Tensor
		name  string
		shape []int
		want  []float32
	}{
		{m.Audio.W, "audio_patch_proj.weight", []int{32, 1, 64}, stored("audio_patch_proj.weight")},
		{m.Audio.B, "audio_patch_proj.bias/double", []int{1, 64}, bias},
		{m.Blocks[0].Norm, "blocks.1.norm1.weight", []int{1, 64}, stored("blocks.1.norm1.weight")},
		{m.Last, "blocks.1.norm2.weight", []int{64}, stored("blocks.1.norm2.weight")},
	} {
		if c.t == nil {
			t.Errorf("%s not bound", c.name)
			continue
		}
		if c.t.Name() != c.name || fmt.Sprint(c.t.Shape()) != fmt.Sprint(c.shape) || fmt.Sprint(c.t.F32()) != fmt.Sprint(c.want) {
			t.Errorf("%s: bound %s %v; want %v and the checkpoint's values (transformed)", c.name, c.t.Name(), c.t.Shape(), c.shape)
		}
	}
	if m.Skip != nil {
		t.Error("a nil module pointer was filled")
	}

	bad := tinyParts{Audio: &part{in: 31, out: 64}, last: 9}
	_, err = LoadModule(b, src, &bad, opts)
	for _, want := range []string{"audio_patch_proj.weight: shape [64 32], want [64 31]", "missing blocks.9.norm2.weight"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	delete(opts.Transforms, "double")
	if _, err = LoadModule(b, src, &tinyParts{Audio: &part{in: 32, out: 64}}, opts); err == nil || !strings.Contains(err.Error(), `audio_patch_proj.bias: transform "double" is not in LoadOptions.Transforms`) {
		t.Errorf("unknown transform: %v", err)
	}
}
