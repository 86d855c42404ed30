package dit

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"h3studio/engine/arch"
	"h3studio/engine/weights"
)

// Config is transformer/config.json, declared once in engine/arch.
type Config = arch.DiT

// AdaLN slot order inside one modality's 6·hidden block of adaln_proj.
const (
	ShiftMSA = iota
	ScaleMSA
	GateMSA
	ShiftMLP
	ScaleMLP
	GateMLP
)

// adaSlots is the six slots above.
const adaSlots = arch.AdaLNSlots

// Modalities is the number of AdaLN modality blocks per timestep (video, text, audio).
const Modalities = arch.Modalities

// ParseConfig is arch.ParseDiT: transformer/config.json bytes, checked.
func ParseConfig(data []byte) (*Config, error) { return arch.ParseDiT(data) }

// ConfigFromMetadata is arch.DiTFromMetadata: the config a single-file
// repack carries in its __metadata__["config"].
func ConfigFromMetadata(md map[string]string) (*Config, error) { return arch.DiTFromMetadata(md) }

// Validate cross-checks c against a checkpoint's tensors and reports every
// missing, misshaped or unexpected tensor in one error.
func Validate(c *Config, src weights.Source) error {
	want := c.Shapes()
	var errs []string
	for _, name := range sortedKeys(want) {
		t, ok := src.Lookup(name)
		switch {
		case !ok:
			errs = append(errs, name+" is missing")
		case !slices.Equal(t.Shape, want[name]):
			errs = append(errs, fmt.Sprintf("%s is %v, config says %v", name, t.Shape, want[name]))
		case !loadable(t.DType):
			errs = append(errs, fmt.Sprintf("%s has dtype %s (want F32, F16, BF16, Q8_0 or Q4_K)", name, t.DType))
		}
	}
	for _, t := range src.Tensors() {
		if _, ok := want[t.Name]; ok {
			continue
		}
		if t.Name == "adaln_t_table" {
			errs = append(errs, "adaln_t_table is present: pruned curve-form DiTs are not supported")
		} else if isModelTensor(t.Name) {
			errs = append(errs, t.Name+" is not expected by the config (a different num_layers or token_refiner_num_layers?)")
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("dit: checkpoint does not match its config (%d problems): %s", len(errs), strings.Join(errs, "; "))
	}
	return nil
}

func loadable(d weights.DType) bool {
	switch d {
	case weights.F32, weights.F16, weights.BF16, weights.Q8_0, weights.Q4_K:
		return true
	}
	return false
}

// isModelTensor reports whether a name belongs to the DiT's namespaces
// (other tensors, e.g. a repack's extra metadata tensors, are ignored).
func isModelTensor(name string) bool {
	for _, p := range []string{"blocks.", "token_refiner.", "final_layer.", "time_embedder.", "rope.",
		"video_patch_proj.", "audio_patch_proj.", "condition_proj."} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return natLess(ks[i], ks[j]) })
	return ks
}

// natLess orders "blocks.2." before "blocks.10.".
func natLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		if pa[i] == pb[i] {
			continue
		}
		x, e1 := strconv.Atoi(pa[i])
		y, e2 := strconv.Atoi(pb[i])
		if e1 == nil && e2 == nil {
			return x < y
		}
		return pa[i] < pb[i]
	}
	return len(pa) < len(pb)
}
