package vae

// Chunk and tile plans of the release's video VAE, in plain Go.
// ref: ComfyUI comfy/ldm/minimax/vae.py split_tiles, blend,
// _decode_temporal_chunks, _decode_temporal_frame_plan, decode_temporal.

import "h3studio/engine/arch"

// tilePlan covers one axis of length n with tiles of size ts whose overlaps
// are at least minOverlap, in steps of unit: starts[i] is where tile i
// begins, overlaps[i] how much tile i+1 overlaps it. A single tile spans
// the whole axis when ts >= n.
type tilePlan struct {
	starts, sizes, overlaps []int
}

func splitTiles(n, ts, minOverlap, unit int) tilePlan {
	if ts >= n {
		return tilePlan{starts: []int{0}, sizes: []int{n}}
	}
	count := arch.TileCount(n, ts, minOverlap)
	overlaps := make([]int, count-1)
	for i := range overlaps {
		overlaps[i] = minOverlap
	}
	remaining := ts*count - minOverlap*(count-1) - n
	for i := range remaining / unit {
		overlaps[i%(count-1)] += unit
	}
	p := tilePlan{starts: []int{0}, overlaps: overlaps}
	for i := range count - 1 {
		p.starts = append(p.starts, p.starts[i]+ts-overlaps[i])
	}
	for range count {
		p.sizes = append(p.sizes, ts)
	}
	return p
}

// blendWeight is the weight of the later tile at position p of an overlap
// of extent e (the earlier one gets 1 minus it): a linear ramp from 0.
func blendWeight(p, e int) float32 { return float32(p) / float32(e) }

// temporalPlan is the decode recipe for a latent of T steps: pad the latent
// with copies of its last step, decode chunks of chunkTokens+overlapTokens
// steps starting every chunkTokens, keep each chunk's first chunkFrames
// frames (minus prePad) and blend the remainder into the next chunk.
type temporalPlan struct {
	padTokens, chunks, frames  int
	chunkTokens, overlapTokens int
	prePad, overlapFrames      int
	ratio                      int
	split                      int // 2 when tokens are dropped: each chunk has a kept part and an overlap part
}

func newTemporalPlan(t int, c *VideoConfig) temporalPlan {
	r := c.TemporalRatio()
	p := temporalPlan{ratio: r}
	p.prePad = mod(-c.ClipLength, r)
	p.chunkTokens = (c.ClipLength + r - 1) / r
	p.overlapTokens = mod(-c.TokenDrop, p.chunkTokens)
	p.overlapFrames = max(p.overlapTokens*r-p.prePad, 0)
	p.split = 1
	if c.TokenDrop > 0 {
		p.split = 2
	}
	pseudo := t + c.TokenDrop
	p.padTokens = mod(-pseudo, p.chunkTokens)
	pseudo += p.padTokens
	p.chunks = pseudo / p.chunkTokens
	if c.TokenDrop > 0 {
		p.chunks--
	}
	if p.chunks < 1 {
		p.padTokens += p.chunkTokens
		p.chunks++
	}
	p.frames = p.framePlan(t+p.padTokens) - p.padFrames(t+p.padTokens, c.ClipLength)
	return p
}

func mod(a, m int) int { return ((a % m) + m) % m }

// framePlan counts the frames the chunks write for a padded latent of zLen.
func (p *temporalPlan) framePlan(zLen int) int {
	chunkFrames := p.chunkTokens * p.ratio
	total, final := 0, 0
	for i := range p.chunks {
		start := i * p.chunkTokens
		end := start + p.chunkTokens + p.overlapTokens
		frames := max(0, min(end, zLen)-min(start, zLen)) * p.ratio
		for j := range p.split {
			fs := j * chunkFrames
			n := max(0, min(fs+chunkFrames, frames)-fs-p.prePad)
			if j == 0 {
				total += n
			} else {
				final = n
			}
		}
	}
	return total + final
}

// padFrames is how many output frames the padding tokens account for.
func (p *temporalPlan) padFrames(zLen, clipLength int) int {
	if p.padTokens <= 0 {
		return 0
	}
	tail := clipLength % p.ratio
	if tail == 0 {
		return p.padTokens * p.ratio
	}
	before := zLen - p.padTokens
	n := 0
	for k := range p.padTokens {
		if (before+k)%p.chunkTokens == 0 {
			n += tail
		} else {
			n += p.ratio
		}
	}
	return n
}
