package textenc

import (
	"errors"
	"fmt"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// load fills module's `st`-tagged weights under prefix through
// weights.LoadModule. Vectors (norm scales, biases) are kept in f32;
// matrices are stored as Options.Precision.Weights says (zero: as the
// checkpoint stores them). Tensors of more than two axes (the Conv3d patch
// embedding) arrive flattened to [rest, out].
// check then compares the loaded shapes with the config; on a mismatch
// the weights are freed again.
func (m *Model) load(prefix string, module any, check func(*shapeCheck)) (*weights.Module, error) {
	o := weights.LoadOptions{Prefix: prefix}
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
	var sc shapeCheck
	check(&sc)
	if err := sc.err(); err != nil {
		ws.Free()
		return nil, err
	}
	return ws, nil
}

// shapeCheck collects weight shape mismatches against the config.
type shapeCheck struct{ errs []error }

func (c *shapeCheck) want(t *ggml.Tensor, shape ...int) {
	got := t.Shape()
	ok := len(got) == len(shape)
	for i := 0; ok && i < len(shape); i++ {
		ok = got[i] == shape[i]
	}
	if !ok {
		c.errs = append(c.errs, fmt.Errorf("textenc: weight %s has ggml shape %v, config wants %v", t.Name(), got, shape))
	}
}

func (c *shapeCheck) err() error { return errors.Join(c.errs...) }
