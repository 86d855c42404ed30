package plan

import (
	"math"
	"testing"

	"h3studio/engine/layout"
)

// An adapter adds its resident factors to the denoise phase's weights and
// its side paths' FLOP to every forward; at strength 0 it costs nothing.
func TestLoRACounted(t *testing.T) {
	req := Request{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 22, PromptTokens: 20, Steps: 8}
	opt := Options{NoFit: true}
	base := mustPlan(t, req, "m5-max-128", "official-q4_k", opt)
	const bytes, rowParams = 600 << 20, 6_000_000
	with := req
	with.LoRAs = []LoRA{{Path: "turbo.safetensors", Strength: 1, ResidentBytes: bytes, BlockRowParams: rowParams}}
	lp := mustPlan(t, with, "m5-max-128", "official-q4_k", opt)
	denoise := func(p *Plan) Phase {
		for _, ph := range p.Memory.Phases {
			if ph.Name == PhaseDenoise {
				return ph
			}
		}
		t.Fatal("no denoise phase")
		return Phase{}
	}
	if len(lp.LoRAs) != 1 || lp.LoRAs[0].ResidentBytes != bytes {
		t.Errorf("the plan reports LoRAs %+v", lp.LoRAs)
	}
	if d := denoise(lp).WeightsBytes - denoise(base).WeightsBytes; d != bytes {
		t.Errorf("denoise weights grew by %d B, want the adapter's %d", d, bytes)
	}
	rows := float64(base.Layout.Rows)
	want := 2 * rows * rowParams / 1e12
	if d := lp.Time.ForwardTFLOP - base.Time.ForwardTFLOP; math.Abs(d-want) > 1e-9*want {
		t.Errorf("a forward grew by %g TFLOP, want 2·rows·params = %g", d, want)
	}
	with.LoRAs[0].Strength = 0
	zero := mustPlan(t, with, "m5-max-128", "official-q4_k", opt)
	if denoise(zero).WeightsBytes != denoise(base).WeightsBytes || zero.Time.ForwardTFLOP != base.Time.ForwardTFLOP {
		t.Error("an adapter at strength 0 was counted")
	}
}
