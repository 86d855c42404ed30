// Package loratest writes small LoRA files for the tests of the packages
// that take them (app's CLI, ui's LoRA list): real adapters in the bare
// PEFT layout engine/lora reads, over the embedded tiny model's DiT.
package loratest

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/lora"
	"h3studio/engine/weights/safetensors"
)

// TinyTarget is the tiny DiT's updatable modules, laid out as the official
// (per-head interleaved) snapshot stores them.
func TinyTarget() lora.Target { return lora.TargetOf(arch.TinyDiT(), "interleaved", "") }

// Tiny writes a rank-2 adapter in the bare PEFT layout (lora_A/lora_B, no
// prefix, no alpha) over every module of the tiny DiT into a temporary
// folder of t, named name, and returns its path; widen > 0 makes every A
// wider than the model's inputs (a misfit). The values are seeded, in
// module order, so a file is the same on every run.
func Tiny(t testing.TB, name string, widen int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	w := &safetensors.Writer{}
	mods := TinyTarget().Modules
	names := make([]string, 0, len(mods))
	for n := range mods {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		m := mods[n]
		for _, f := range []struct {
			suffix    string
			rows, col int
		}{{".lora_A.weight", 2, m.In + widen}, {".lora_B.weight", m.Out, 2}} {
			v := make([]float32, f.rows*f.col)
			for i := range v {
				v[i] = float32(0.3 * rng.NormFloat64())
			}
			if err := w.AddFloat32(n+f.suffix, safetensors.F32, []int64{int64(f.rows), int64(f.col)}, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(t.TempDir(), name)
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}
