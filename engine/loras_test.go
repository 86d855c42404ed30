package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/lora"
	"h3studio/engine/plan"
	"h3studio/engine/sampler"
	"h3studio/engine/weights"
	"h3studio/engine/weights/safetensors"
)

// writeLoRA writes a rank-4 PEFT adapter over every updatable module of
// cfg (hidden widened by extra, to make a misfit).
func writeLoRA(t *testing.T, cfg *arch.DiT, extra int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(4, 4))
	w := &safetensors.Writer{}
	for name, m := range lora.TargetOf(cfg, "interleaved", "").Modules {
		for _, f := range []struct {
			suffix    string
			rows, col int
			std       float64
		}{{".lora_A.weight", 4, m.In + extra, 0.2}, {".lora_B.weight", m.Out, 4, 0.2}} {
			v := make([]float32, f.rows*f.col)
			for i := range v {
				v[i] = float32(f.std * rng.NormFloat64())
			}
			if err := w.AddFloat32(name+f.suffix, safetensors.F32, []int64{int64(f.rows), int64(f.col)}, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	path := filepath.Join(t.TempDir(), "tiny_lora.safetensors")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// A LoRA at strength 0 renders the base's frames bit for bit; at 1 it
// changes them; the plan counts its factors; a LoRA of another shape is
// refused by Plan.
func TestGenerateLoRA(t *testing.T) {
	e := openTiny(t)
	path := writeLoRA(t, arch.TinyDiT(), 0)
	render := func(ls []plan.LoRA) (*recorder, *plan.Plan) {
		p := tinyPlan(t, e, plan.Request{Prompt: "a red fox", Steps: 2, LoRAs: ls})
		var r recorder
		if _, err := e.Generate(context.Background(), Request{Seed: 3, Output: &r}, p, nil); err != nil {
			t.Fatal(err)
		}
		return &r, p
	}
	base, _ := render(nil)
	zero, _ := render([]plan.LoRA{{Path: path, Strength: 0}})
	one, p := render([]plan.LoRA{{Path: path, Strength: 1}})
	if !reflect.DeepEqual(base.frames, zero.frames) {
		t.Error("a LoRA at strength 0 changed the frames")
	}
	if reflect.DeepEqual(base.frames, one.frames) {
		t.Error("a LoRA at strength 1 left the frames unchanged")
	}
	if l := p.Request.LoRAs[0]; l.ResidentBytes <= 0 || l.BlockRowParams <= 0 {
		t.Errorf("the plan did not count the LoRA: %+v", l)
	}
	mc, err := plan.LookupMachine("m5-max-128")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Plan(plan.Request{Prompt: "x", LoRAs: []plan.LoRA{{Path: writeLoRA(t, arch.TinyDiT(), 8), Strength: 1}}}, mc, plan.Options{})
	var mf *lora.Misfit
	if !errors.As(err, &mf) || mf.Kind != lora.Shape {
		t.Fatalf("a LoRA of another width: %v, want a shape misfit", err)
	}
}

// The request's sigma shifts replace the partition's (a Turbo adapter's
// 6/3), each one it sets.
func TestScheduleTakesRequestShifts(t *testing.T) {
	part := &weights.Partition{SigmaShift: map[string]float64{"video": 12, "audio": 3}}
	for _, c := range []struct{ v, a, wantV, wantA float64 }{{0, 0, 12, 3}, {6, 0, 6, 3}, {6, 2, 6, 2}} {
		g := &generation{plan: &plan.Plan{Request: plan.Request{Steps: 4, VideoShift: c.v, AudioShift: c.a}}, part: part}
		got, err := g.schedule()
		if err != nil {
			t.Fatal(err)
		}
		want, err := sampler.NewSchedule(4, c.wantV, c.wantA)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("shifts %g/%g: schedule %v, want %v's", c.v, c.a, got, want)
		}
	}
}
