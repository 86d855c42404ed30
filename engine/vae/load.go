package vae

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

// The codecs load like the DiT: their module structs carry the
// checkpoint's tensor names as `st` tags with `shape` tags the config
// resolves (each leaf module's Dims), and weights.LoadModule reports every
// missing or misshaped tensor by its checkpoint name before anything is
// allocated. Weights the graphs want in another form than stored are
// computed on the host by the transforms below.

// loadNet loads net's tagged weights from src onto b as f32, except 2-D
// matrices, which are kept as matmul (the video decoder's Precision.Weights).
func loadNet(b *ggml.Backend, src weights.Source, net any, matmul ggml.DType) (*weights.Module, error) {
	store := func(info weights.TensorInfo) (ggml.DType, error) {
		if len(info.Shape) == 2 {
			return matmul, nil
		}
		return ggml.F32, nil
	}
	m, err := weights.LoadModule(b, src, net, weights.LoadOptions{Store: store, Transforms: transforms})
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	return m, nil
}

// transforms are the host computations the codecs' `transform` tags name.
var transforms = map[string]weights.Transform{
	"weightnorm":    weightNorm,
	"conv3d":        conv3DKernel,
	"conv3d_lanes":  conv3DLanes,
	"exp":           mapValues(func(x float64) float64 { return math.Exp(x) }),
	"snake_inv":     mapValues(func(x float64) float64 { return 1 / (x + audioSnakeEps) }),
	"snakebeta_inv": mapValues(func(x float64) float64 { return 1 / (math.Exp(x) + audioSnakeEps) }),
	"up_blocks":     upBlocks,
	"down_blocks":   downBlocks,
}

// weightNorm reads name's weight_g [outer, 1, 1] and weight_v [outer,
// inner, k] (want) and returns g·v/‖v‖ (norm over each outer slice),
// PyTorch's weight_norm with dim 0. Checkpoints converted for ComfyUI (the
// Comfy-Org repack) store the folded weight as name itself; that is read
// as is.
func weightNorm(src weights.Source, name string, want []int64) ([]float32, error) {
	base := strings.TrimSuffix(name, ".weight")
	if _, folded := src.Lookup(name); folded {
		if _, wn := src.Lookup(base + ".weight_g"); !wn {
			return weights.ReadFloat32(src, name, want)
		}
	}
	outer, inner, k := int(want[0]), int(want[1]), int(want[2])
	g, errG := weights.ReadFloat32(src, base+".weight_g", []int64{want[0], 1, 1})
	v, errV := weights.ReadFloat32(src, base+".weight_v", want)
	if err := errors.Join(errG, errV); err != nil {
		return nil, err
	}
	out := make([]float32, len(v))
	n := inner * k
	for o := range outer {
		var ss float64
		for _, x := range v[o*n : (o+1)*n] {
			ss += float64(x) * float64(x)
		}
		s := float64(g[o]) / math.Sqrt(ss)
		for i := o * n; i < (o+1)*n; i++ {
			out[i] = float32(float64(v[i]) * s)
		}
	}
	return out, nil
}

// conv3DKernel reorders a Conv3d weight want = [Cout, Cin, K, K, K] into
// ggml.Conv3D's layout.
func conv3DKernel(src weights.Source, name string, want []int64) ([]float32, error) {
	raw, err := weights.ReadFloat32(src, name, want)
	if err != nil {
		return nil, err
	}
	return ggml.Conv3DWeight(raw, int(want[0]), int(want[1]), int(want[2]), int(want[3]), int(want[4])), nil
}

// conv3DLanes is conv3DKernel with the input channels padded with zero
// weights to pixelLanes (pixelConv).
func conv3DLanes(src weights.Source, name string, want []int64) ([]float32, error) {
	raw, err := weights.ReadFloat32(src, name, want)
	if err != nil {
		return nil, err
	}
	cout, cin, k := int(want[0]), int(want[1]), int(want[2])*int(want[3])*int(want[4])
	if cin > pixelLanes {
		return nil, fmt.Errorf("%s: %d input channels, more than %d", name, cin, pixelLanes)
	}
	wide := make([]float32, cout*pixelLanes*k)
	for o := range cout {
		copy(wide[o*pixelLanes*k:], raw[o*cin*k:(o+1)*cin*k])
	}
	return ggml.Conv3DWeight(wide, cout, pixelLanes, int(want[2]), int(want[3]), int(want[4])), nil
}

// mapValues is a transform applying f to every stored value, in float64
// as the reference's per-channel parameters are precomputed.
func mapValues(f func(float64) float64) weights.Transform {
	return func(src weights.Source, name string, want []int64) ([]float32, error) {
		v, err := weights.ReadFloat32(src, name, want)
		if err != nil {
			return nil, err
		}
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(f(float64(x)))
		}
		return out, nil
	}
}
