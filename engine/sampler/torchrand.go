package sampler

import "math"

// TorchNormal returns the n float32 values torch.randn(n) draws from a CPU
// generator seeded with seed (torch.Generator().manual_seed(seed)), the
// official pipeline's noise: SGLang's latent preparation and condition
// augmentation draw every tensor this way, and ComfyUI draws its noise on
// the CPU too, so the same seed gives the same clip on every machine and in
// every peer. The recipe is ATen's normal_fill for contiguous float
// tensors of at least 16 values: all n uniforms first (24 random bits of
// one MT19937 output each), then Box-Muller on blocks of 16 (the first 8
// are u1, the next 8 u2), and when n is not a multiple of 16 the last 16
// values are redrawn from 16 fresh uniforms. The transcendental functions
// run in float64 and round once, where ATen's vector code rounds at every
// float32 operation: values agree to a few float32 ulps. Fewer than 16
// values take ATen's scalar path, which this does not reproduce; callers
// draw whole latents.
func TorchNormal(seed uint64, n int) []float32 {
	out := make([]float32, n)
	if n == 0 {
		return out
	}
	mt := newMT19937(uint32(seed))
	for i := range out {
		out[i] = mt.uniform24()
	}
	for i := 0; i+16 <= n; i += 16 {
		boxMuller16(out[i : i+16])
	}
	if n%16 != 0 && n >= 16 {
		tail := out[n-16:]
		for i := range tail {
			tail[i] = mt.uniform24()
		}
		boxMuller16(tail)
	}
	return out
}

// boxMuller16 turns 16 uniforms into 16 normals in place: u1 = 1 − x[j],
// u2 = x[j+8], radius √(−2 ln u1), angle 2π·u2; cosines land in the first
// half, sines in the second.
func boxMuller16(x []float32) {
	const twoPi = float32(2 * math.Pi)
	for j := 0; j < 8; j++ {
		u1 := 1 - x[j]
		theta := float64(twoPi * x[j+8])
		radius := math.Sqrt(-2 * math.Log(float64(u1)))
		x[j] = float32(radius * math.Cos(theta))
		x[j+8] = float32(radius * math.Sin(theta))
	}
}

// mt19937 is the 32-bit Mersenne Twister (Matsumoto and Nishimura, 1998),
// seeded as ATen's CPU generator seeds it (init_genrand with the seed's low
// 32 bits).
type mt19937 struct {
	state [624]uint32
	next  int
}

func newMT19937(seed uint32) *mt19937 {
	m := &mt19937{next: 624}
	m.state[0] = seed
	for i := 1; i < 624; i++ {
		p := m.state[i-1]
		m.state[i] = 1812433253*(p^(p>>30)) + uint32(i)
	}
	return m
}

func (m *mt19937) twist() {
	const upper, lower, matrix = 0x80000000, 0x7fffffff, 0x9908b0df
	for i := 0; i < 624; i++ {
		y := m.state[i]&upper | m.state[(i+1)%624]&lower
		v := m.state[(i+397)%624] ^ y>>1
		if y&1 != 0 {
			v ^= matrix
		}
		m.state[i] = v
	}
	m.next = 0
}

// uint32 is the next tempered output.
func (m *mt19937) uint32() uint32 {
	if m.next >= 624 {
		m.twist()
	}
	y := m.state[m.next]
	m.next++
	y ^= y >> 11
	y ^= y << 7 & 0x9d2c5680
	y ^= y << 15 & 0xefc60000
	y ^= y >> 18
	return y
}

// uniform24 is ATen's uniform_real_distribution<float>(0, 1): the low 24
// bits of one output times 2^-24.
func (m *mt19937) uniform24() float32 {
	return float32(m.uint32()&(1<<24-1)) * (1.0 / (1 << 24))
}
