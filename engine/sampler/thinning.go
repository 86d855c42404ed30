package sampler

import (
	"fmt"
	"sort"
)

// ThinningConfig is layer thinning (h3.c --layers N, not part of the
// release): run only Keep of the DiT's blocks. Blocks are ranked by their
// AdaLN gate magnitude (mean |gate_msa| and |gate_mlp| over the run's
// modulation tables) and the smallest are skipped; the first two blocks and
// the last are always kept (they open and close the residual stream, and
// block 1 proved essential despite a small gate).
type ThinningConfig struct {
	Keep int // 0 means all blocks
}

// Active returns which blocks run, given each block's gate score.
func (c ThinningConfig) Active(gateScores []float64) ([]bool, error) {
	n := len(gateScores)
	active := make([]bool, n)
	for i := range active {
		active[i] = true
	}
	if c.Keep == 0 || c.Keep == n {
		return active, nil
	}
	if c.Keep < n/2 || c.Keep > n || n-c.Keep > n-3 {
		return nil, fmt.Errorf("sampler: cannot keep %d of %d blocks; keep %d to %d", c.Keep, n, max(n/2, 3), n)
	}
	cand := make([]int, 0, n-3)
	for b := 2; b+1 < n; b++ {
		cand = append(cand, b)
	}
	sort.SliceStable(cand, func(i, j int) bool { return gateScores[cand[i]] < gateScores[cand[j]] })
	for _, b := range cand[:n-c.Keep] {
		active[b] = false
	}
	return active, nil
}
