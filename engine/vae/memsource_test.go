package vae

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"h3studio/engine/weights"
)

// memSource is an in-memory weights.Source of F32 tensors.
type memSource struct {
	data  map[string][]float32
	shape map[string][]int64
}

func newMemSource() *memSource {
	return &memSource{data: map[string][]float32{}, shape: map[string][]int64{}}
}

// add fills a tensor with N(0, scale²) plus shift.
func (m *memSource) add(r *rand.Rand, name string, scale, shift float64, shape ...int64) {
	n := int64(1)
	for _, s := range shape {
		n *= s
	}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64()*scale + shift)
	}
	m.data[name], m.shape[name] = v, shape
}

func (m *memSource) Tensors() []weights.TensorInfo {
	var out []weights.TensorInfo
	for n := range m.data {
		t, _ := m.Lookup(n)
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (m *memSource) Lookup(name string) (weights.TensorInfo, bool) {
	v, ok := m.data[name]
	if !ok {
		return weights.TensorInfo{}, false
	}
	return weights.TensorInfo{Name: name, DType: weights.F32, Shape: m.shape[name], Bytes: int64(4 * len(v))}, true
}

func (m *memSource) Data(name string) ([]byte, bool) {
	v, ok := m.data[name]
	if !ok {
		return nil, false
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b, true
}

func (m *memSource) Mapping(string) []byte       { return nil }
func (m *memSource) Files() []weights.FileInfo   { return nil }
func (m *memSource) Metadata() map[string]string { return nil }
func (m *memSource) Close() error                { return nil }
func (m *memSource) get(name string) []float32   { return m.data[name] }
func (m *memSource) lin(name string, in int) func([]float64) []float64 {
	w, b := m.data[name+".weight"], m.data[name+".bias"]
	out := len(w) / in
	return func(x []float64) []float64 {
		y := make([]float64, out)
		for o := range out {
			s := float64(b[o])
			row := w[o*in:][:in]
			for i, v := range row {
				s += float64(v) * x[i]
			}
			y[o] = s
		}
		return y
	}
}

// The Comfy-Org repack stores the audio convolutions folded (plain .weight,
// no weight_g/weight_v); such a checkpoint decodes like the release's.
func TestAudioFoldedWeights(t *testing.T) {
	fx := openFixture(t, "audio_weights_decoder")
	m := newMemSource()
	for _, info := range fx.Tensors() {
		v, err := weights.Float32(fx, info.Name)
		if err != nil {
			t.Fatal(err)
		}
		m.data[info.Name], m.shape[info.Name] = v, info.Shape
	}
	folded := 0
	for name := range m.data {
		base, ok := strings.CutSuffix(name, ".weight_g")
		if !ok {
			continue
		}
		g, v, shape := m.data[name], m.data[base+".weight_v"], m.shape[base+".weight_v"]
		n := len(v) / len(g)
		w := make([]float32, len(v))
		for o := range g {
			var ss float64
			for _, x := range v[o*n : (o+1)*n] {
				ss += float64(x) * float64(x)
			}
			for i := o * n; i < (o+1)*n; i++ {
				w[i] = float32(float64(g[o]) * float64(v[i]) / math.Sqrt(ss))
			}
		}
		delete(m.data, name)
		delete(m.data, base+".weight_v")
		m.data[base+".weight"], m.shape[base+".weight"] = w, shape
		folded++
	}
	a, err := LoadAudio(cpuBackend(t), m, audioConfig(t, fx), AudioDecoderPart, AudioOptions{Precision: exactKV})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dfx := openFixture(t, "audio_decode")
	zd, zs := fixtureTensor(t, dfx, "input.latent")
	y, err := a.Decode(context.Background(), AudioLatent{C: int(zs[1]), T: int(zs[3]), Data: zd})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := fixtureTensor(t, dfx, "output.waveform")
	t.Logf("%d convolutions stored folded", folded)
	checkRel(t, "waveform from folded weights", y.Data, want, tolF32)
}
