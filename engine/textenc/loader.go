package textenc

import (
	"fmt"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// load fills module's `st`-tagged weights under prefix through
// weights.LoadModule, which checks each against its `shape` tag (names
// resolved from dims and the module's own Dims) and reports every
// mismatch. Vectors (norm scales, biases) are kept in f32; matrices are
// stored as Options.Precision.Weights says (zero: as the checkpoint stores
// them). Tensors of more than two axes (the Conv3d patch embedding) arrive
// flattened to [rest, out].
func (m *Model) load(prefix string, module any, dims map[string]int64) (*weights.Module, error) {
	o := weights.LoadOptions{Prefix: prefix, Dims: dims}
	if wt, ok := m.opts.Precision.Weights.Get(); ok {
		o.Store = func(info weights.TensorInfo) (ggml.DType, error) {
			if len(info.Shape) <= 1 {
				return ggml.F32, nil
			}
			return wt, nil
		}
	}
	ws, err := weights.LoadModule(m.b, m.src, module, o)
	if err != nil {
		return nil, fmt.Errorf("textenc: %w", err)
	}
	return ws, nil
}
