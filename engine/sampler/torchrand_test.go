package sampler

import (
	"math"
	"testing"

	"h3studio/engine/weights/safetensors"
)

// TorchNormal against torch.randn on a CPU generator (torch 2.11, the
// official pipeline's draws as tools/fixtures/e2e/gen.py stored them): the
// T2VA case's target video noise [24, 7, 4, 6] and its audio noise (74 rows
// of 32, stored as [32, 2, 37]), both from seed 7.
func TestTorchNormalMatchesTorch(t *testing.T) {
	f, err := safetensors.Open("../../tools/fixtures/e2e/testdata/t2va.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	get := func(name string) []float32 {
		tn, ok := f.Tensor(name)
		if !ok {
			t.Fatalf("fixture has no %s", name)
		}
		v, err := tn.Float32()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	check := func(name string, got, want []float32) {
		var worst float64
		for i := range want {
			worst = math.Max(worst, math.Abs(float64(got[i]-want[i])))
		}
		t.Logf("%s: %d values, worst abs difference %.2e", name, len(want), worst)
		if worst > 1e-5 {
			t.Errorf("%s: worst abs difference %.3e from torch", name, worst)
		}
	}
	video := get("noise.video")
	check("video", TorchNormal(7, len(video)), video)
	audio := get("noise.audio") // [32][2][37] from rows [2*37][32]
	rows := TorchNormal(7, len(audio))
	perm := make([]float32, len(audio))
	const c, ta = 32, 37
	for ch := 0; ch < 2; ch++ {
		for i := 0; i < ta; i++ {
			for k := 0; k < c; k++ {
				perm[(k*2+ch)*ta+i] = rows[(ch*ta+i)*c+k]
			}
		}
	}
	check("audio", perm, audio)
}

// A draw whose length is not a multiple of 16 redraws its last 16 values
// from fresh uniforms (ATen's normal_fill): the values before them are the
// same as a longer draw's, the tail is not.
func TestTorchNormalTail(t *testing.T) {
	a, b := TorchNormal(3, 40), TorchNormal(3, 48)
	for i := 0; i < 24; i++ {
		if a[i] != b[i] {
			t.Fatalf("value %d differs between a 40- and a 48-value draw", i)
		}
	}
	if a[39] == b[39] {
		t.Error("the 40-value draw kept its last value; ATen redraws the tail")
	}
}
