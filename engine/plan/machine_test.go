package plan

import (
	"testing"

	"h3studio/engine/layout"
)

// TestBudget: the budget is the working set less Reserve, never negative,
// and the user's override wins; BudgetSource says which it is.
func TestBudget(t *testing.T) {
	for _, c := range []struct {
		m    Machine
		want int64
		src  MemorySource
	}{
		{Machine{WorkingSet: 48 * gib, Source: SourceMetal}, 46 * gib, SourceMetal},
		{Machine{WorkingSet: 10 * gib, Source: SourceSysctl}, 8 * gib, SourceSysctl},
		{Machine{WorkingSet: gib, Source: SourceHost}, 0, SourceHost},
		{Machine{WorkingSet: 48 * gib, Source: SourceMetal, BudgetBytes: 40 * gib}, 40 * gib, SourceOverride},
	} {
		if got := c.m.Budget(); got != c.want || c.m.BudgetSource() != c.src {
			t.Errorf("%+v: budget %d from %s, want %d from %s", c.m, got, c.m.BudgetSource(), c.want, c.src)
		}
	}
}

// TestWithMetal: a Mac's working set, buffer limit, threadgroup memory and
// family come from the Metal report when there is one; without one (or an
// empty one) Apple's rule on hw.memsize stands, and a machine that is not
// Apple silicon stays the CPU profile whatever it is handed.
func TestWithMetal(t *testing.T) {
	// A 64 GB M5 Max whose wired limit was raised to 56 GiB.
	gpu := &AppleGPU{WorkingSet: 56 * gib, MaxBuffer: 36 * gib, Threadgroup: 64 << 10, Family: 10}
	mac := machineFor(64*gib, "Apple M5 Max")
	if mac.Source != SourceSysctl || mac.WorkingSet != 48*gib {
		t.Fatalf("M5 Max by sysctl: %s %d", mac.Source, mac.WorkingSet)
	}
	got := mac.withMetal(gpu)
	if got.Source != SourceMetal || got.WorkingSet != 56*gib || got.MaxBufferBytes != 36*gib ||
		got.Threadgroup != 64<<10 || got.GPUFamily != "apple10" || got.Budget() != 54*gib {
		t.Errorf("M5 Max with Metal: %+v", got)
	}
	if got.Chip != "M5 Max" || got.MatrixTFLOPS != mac.MatrixTFLOPS {
		t.Errorf("Metal report changed the chip's throughput: %+v", got)
	}
	for name, g := range map[string]*AppleGPU{"nil": nil, "empty": {}} {
		if m := mac.withMetal(g); m != mac {
			t.Errorf("%s report: %+v, want the sysctl profile", name, m)
		}
	}
	cpu := machineFor(32*gib, "AMD EPYC 9654")
	if m := cpu.withMetal(gpu); m != cpu || m.Source != SourceHost || m.WorkingSet != 24*gib {
		t.Errorf("CPU machine with a Metal report: %+v", m)
	}
	if m := mac.withMetal(gpu).WithMemoryGB(128); m.Source != SourceProfile || m.WorkingSet != 96*gib {
		t.Errorf("WithMemoryGB: %s %d, want Apple's rule", m.Source, m.WorkingSet)
	}
	if m := mustMachine(t, "m5-max-64"); m.Source != SourceProfile {
		t.Errorf("built-in profile: source %s", m.Source)
	}
	if _, err := LookupMachine("auto"); err == nil {
		t.Error(`LookupMachine("auto") answered without the GPU's report`)
	}
}

// TestPlanCarriesBudgetSource: a plan reports where its budget came from,
// and its phase peaks are the phases' own bytes, the Reserve not among
// them (it is counted once, in the budget).
func TestPlanCarriesBudgetSource(t *testing.T) {
	mc := machineFor(64*gib, "Apple M5 Max").withMetal(&AppleGPU{WorkingSet: 50 * gib})
	r := Request{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 22, PromptTokens: 20, Steps: 4}
	p, err := Make(r, mc, mustModel(t, "official-bf16"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Memory.BudgetSource != SourceMetal || p.Memory.BudgetBytes != 48*gib {
		t.Errorf("memory %s %d, want metal %d", p.Memory.BudgetSource, p.Memory.BudgetBytes, 48*gib)
	}
	for _, ph := range p.Memory.Phases {
		if sum := ph.WeightsBytes + ph.ScratchBytes + ph.MediaBytes + ph.CarriedBytes; ph.PeakBytes != sum {
			t.Errorf("%s: peak %d, its parts %d", ph.Name, ph.PeakBytes, sum)
		}
	}
	q, err := Make(r, mc.WithBudgetGB(40), mustModel(t, "official-bf16"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if q.Memory.BudgetSource != SourceOverride {
		t.Errorf("override: source %s", q.Memory.BudgetSource)
	}
}
