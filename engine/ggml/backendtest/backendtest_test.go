package backendtest

import (
	"strings"
	"testing"

	"h3studio/engine/ggml"
)

func cpu(t testing.TB) *ggml.Backend {
	t.Helper()
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestCPU runs every case on the CPU backend against its float64 reference
// and audits its graph against the Metal op table.
func TestCPU(t *testing.T) {
	b := cpu(t)
	for i, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			res, err := Run(b, c, uint64(i+1))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("nmse %.3g (tol %.0e)", res.NMSE, c.Tol)
			if !(res.NMSE <= c.Tol) {
				t.Errorf("nmse %.3g exceeds %.0e", res.NMSE, c.Tol)
			}
			checkAudit(t, c, res.Findings)
		})
	}
}

// checkAudit wants no Metal fallback except the ops a case lists.
func checkAudit(t *testing.T, c Case, fs []ggml.Finding) {
	t.Helper()
	var got []string
	for _, f := range fs {
		got = append(got, f.Node.Op)
		ok := false
		for _, op := range c.Fallback {
			ok = ok || op == f.Node.Op
		}
		if !ok {
			t.Errorf("would fall back to the CPU on Metal: %s", f)
		}
	}
	for _, op := range c.Fallback {
		if !strings.Contains(strings.Join(got, " "), op) {
			t.Errorf("audit did not flag %s (got %v)", op, got)
		}
	}
}
