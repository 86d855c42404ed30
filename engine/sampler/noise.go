package sampler

import "math/rand/v2"

// Noise returns n standard-normal values, the same for the same seed and
// stream on every machine (PCG plus math/rand's ziggurat normal). stream
// separates independent draws of one seed (target video, target audio,
// each condition's augmentation).
func Noise(seed, stream uint64, n int) []float32 {
	r := rand.New(rand.NewPCG(seed, stream))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}
