package textenc

import "math"

// visionTower64 runs one item (an image or a 2-frame block) through the
// tower: patches [N, C*T*P*P] in merge order, grid gh x gw patches.
// It returns the merged tokens and the deepstack features, and the tower's
// input after patch and position embedding.
func (r *ref64) visionTower64(patches []float64, gh, gw int) (merged []float64, deepstack [][]float64, embed []float64) {
	vc := r.cfg.Vision
	D := vc.Hidden
	N := gh * gw
	in := len(patches) / N
	x := linear64(patches, N, in, r.w("model.visual.patch_embed.proj.weight"), r.w("model.visual.patch_embed.proj.bias"))
	pe := r.w("model.visual.pos_embed.weight")
	idx, wts := posEmbedInterp(gh, gw, vc.SpatialMerge, vc.GridSide())
	for n := 0; n < N; n++ {
		for c := 0; c < 4; c++ {
			row := pe[int(idx[c][n])*D : (int(idx[c][n])+1)*D]
			for i := 0; i < D; i++ {
				x[n*D+i] += float64(wts[c][n]) * row[i]
			}
		}
	}
	embed = append([]float64(nil), x...)
	rows, cols := visionRoPEPositions(gh, gw, vc.SpatialMerge)
	hd := D / vc.Heads
	angles := make([][]float64, N)
	for n := range angles {
		a := make([]float64, hd/2)
		q := hd / 4
		for j := 0; j < q; j++ {
			inv := math.Pow(vc.RoPETheta, -float64(2*j)/float64(hd/2))
			a[j] = float64(rows[n]) * inv
			a[q+j] = float64(cols[n]) * inv
		}
		angles[n] = a
	}
	act := geluTanh64
	if vc.Act == "gelu" {
		act = geluErf64
	}
	for li := 0; li < vc.Depth; li++ {
		p := "model.visual.blocks." + itoa(li) + "."
		h := layerNorm64(x, D, r.w(p+"norm1.weight"), r.w(p+"norm1.bias"), 1e-6)
		qkv := linear64(h, N, D, r.w(p+"attn.qkv.weight"), r.w(p+"attn.qkv.bias"))
		att := make([]float64, N*D)
		for hh := 0; hh < vc.Heads; hh++ {
			qs := make([][]float64, N)
			ks := make([][]float64, N)
			for n := 0; n < N; n++ {
				qs[n] = append([]float64(nil), qkv[n*3*D+hh*hd:n*3*D+(hh+1)*hd]...)
				ks[n] = append([]float64(nil), qkv[n*3*D+D+hh*hd:n*3*D+D+(hh+1)*hd]...)
				rotateHalf64(qs[n], angles[n])
				rotateHalf64(ks[n], angles[n])
			}
			key := func(b int) []float64 { return ks[b] }
			val := func(b int) []float64 { return qkv[b*3*D+2*D+hh*hd : b*3*D+2*D+(hh+1)*hd] }
			for a := 0; a < N; a++ {
				attend64(qs[a], N, key, val, att[a*D+hh*hd:a*D+(hh+1)*hd])
			}
		}
		o := linear64(att, N, D, r.w(p+"attn.proj.weight"), r.w(p+"attn.proj.bias"))
		for i := range x {
			x[i] += o[i]
		}
		h = layerNorm64(x, D, r.w(p+"norm2.weight"), r.w(p+"norm2.bias"), 1e-6)
		f := linear64(h, N, D, r.w(p+"mlp.linear_fc1.weight"), r.w(p+"mlp.linear_fc1.bias"))
		for i := range f {
			f[i] = act(f[i])
		}
		f = linear64(f, N, vc.Intermediate, r.w(p+"mlp.linear_fc2.weight"), r.w(p+"mlp.linear_fc2.bias"))
		for i := range x {
			x[i] += f[i]
		}
		for k, d := range vc.Deepstack {
			if d == li {
				deepstack = append(deepstack, r.merger64("model.visual.deepstack_merger_list."+itoa(k)+".", x, N, true))
			}
		}
	}
	merged = r.merger64("model.visual.merger.", x, N, false)
	return merged, deepstack, embed
}

// merger64 concatenates each 2x2 block's four patch vectors (consecutive in
// merge order) and applies the two-layer exact-GELU MLP; the LayerNorm runs
// per patch (main merger) or over the concatenation (deepstack mergers).
func (r *ref64) merger64(p string, x []float64, N int, postShuffle bool) []float64 {
	vc := r.cfg.Vision
	D := vc.Hidden
	u := vc.SpatialMerge * vc.SpatialMerge
	var h []float64
	if postShuffle {
		h = layerNorm64(x, D*u, r.w(p+"norm.weight"), r.w(p+"norm.bias"), 1e-6)
	} else {
		h = layerNorm64(x, D, r.w(p+"norm.weight"), r.w(p+"norm.bias"), 1e-6)
	}
	f := linear64(h, N/u, D*u, r.w(p+"linear_fc1.weight"), r.w(p+"linear_fc1.bias"))
	for i := range f {
		f[i] = geluErf64(f[i])
	}
	return linear64(f, N/u, D*u, r.w(p+"linear_fc2.weight"), r.w(p+"linear_fc2.bias"))
}
