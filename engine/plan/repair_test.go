package plan

import (
	"strings"
	"testing"

	"h3studio/engine/layout"
)

// A budget set below what the machine has is the problem to name: the
// repair is the smallest budget (to a tenth of a GB) the request fits in,
// not a bigger Mac. A new user's 1 GB budget got "use a Mac with 24 GB"
// on a machine that fitted the request as it was.
func TestRepairRaisesAnOverriddenBudget(t *testing.T) {
	r := Request{Canvas: layout.Canvas{Width: 512, Height: 512}, Frames: 22, PromptTokens: 40}
	m := mustModel(t, "official-q4_k")
	mc := mustMachine(t, "m5-max-128").WithBudgetGB(1)
	p, err := Make(r, mc, m, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Verdict != Refused || p.Repair == nil {
		t.Fatalf("under 1 GB: %s %q", p.Verdict, p.Error)
	}
	t.Logf("refused: %s", p.Error)
	b := p.Repair.BudgetGB
	if b <= 1 || p.Repair.MemoryGB != 0 || strings.Contains(p.Error, "a Mac with") || !strings.Contains(p.Error, "a memory budget of") {
		t.Fatalf("repair %+v", p.Repair)
	}
	for _, c := range []struct {
		gb   float64
		want string
	}{{b, Fits}, {b - 0.1, Refused}} {
		q, err := Make(r, mc.WithBudgetGB(c.gb), m, Options{NoFit: false})
		if err != nil || q.Verdict != c.want {
			t.Errorf("at %.1f GB: %v %s, want %s", c.gb, err, q.Verdict, c.want)
		}
	}
}

// The machine a repair names is of the kind this one is: a Mac for a Mac,
// a machine with that much memory otherwise; and only one the request
// fits as it is.
func TestRepairNamesTheMachineKind(t *testing.T) {
	// The smallest request on machines below the smallest Mac sold: no
	// fewer frames, smaller canvas or lighter model fits.
	r := Request{Canvas: layout.Canvas{Width: 256, Height: 256}, Frames: 22, PromptTokens: 40}
	m := mustModel(t, "official-q4_k")
	for _, c := range []struct {
		mc   Machine
		want string
	}{
		{mustMachine(t, "m1-air-4"), "a Mac with 8 GB"},
		{machineFor(3<<30, "Intel(R) Xeon(R)"), "a machine with 8 GB of memory"},
	} {
		p, err := Make(r, c.mc, m, Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %s", c.mc.Name, p.Error)
		if p.Repair == nil || p.Repair.MemoryGB == 0 {
			t.Fatalf("%s: %s %q names no machine", c.mc.Name, p.Verdict, p.Error)
		}
		if !strings.Contains(p.Error, c.want) || c.mc.Mac() != p.Mac {
			t.Errorf("%s (Mac %v): %q, want %q", c.mc.Name, p.Mac, p.Error, c.want)
		}
		if q, err := Make(r, c.mc.WithMemoryGB(p.Repair.MemoryGB), m, Options{}); err != nil || q.Verdict != Fits {
			t.Errorf("%s at the named %d GB: %v %s", c.mc.Name, p.Repair.MemoryGB, err, q.Verdict)
		}
	}
}
