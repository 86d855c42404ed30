package weights

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"

	"h3studio/engine/ggml"
	"h3studio/engine/weights/safetensors"
)

// SynthBlock is one block of a synthetic shard (see WriteSynthShard).
type SynthBlock struct {
	ID *ggml.Tensor `st:"id"`
	W0 *ggml.Tensor `st:"w0"`
	W1 *ggml.Tensor `st:"w1"`
	W2 *ggml.Tensor `st:"w2"`
	W3 *ggml.Tensor `st:"w3"`
}

// SynthModel is the module layout of a synthetic shard.
type SynthModel struct {
	Blocks []SynthBlock `st:"blocks"`
}

// SynthSuffixes are the per-block tensor names of a synthetic shard.
var SynthSuffixes = []string{"id", "w0", "w1", "w2", "w3"}

// WriteSynthShard writes a large single-file shard for memory and
// throughput measurements without holding it in memory: blocks blocks of
// four BF16 [rows, 1024] matrices plus an 8-value F32 "id" tensor holding
// (block, 0, ...). Matrix rows repeat one random row pattern. align picks
// where the data section starts (8 mod 16 like the release, or 0 mod 64).
func WriteSynthShard(path string, blocks, rows int, align safetensors.Alignment) error {
	const cols = 1024
	r := rand.New(rand.NewPCG(7, 7))
	row := make([]byte, 2*cols)
	for i := 0; i < cols; i++ {
		binary.LittleEndian.PutUint16(row[2*i:], safetensors.F32ToBF16(float32(r.NormFloat64())))
	}
	chunk := make([]byte, 0, 64*len(row))
	for len(chunk) < cap(chunk) {
		chunk = append(chunk, row...)
	}
	w := &safetensors.Writer{Align: align}
	for b := 0; b < blocks; b++ {
		id := make([]float32, 8)
		id[0] = float32(b)
		if err := w.AddFloat32(fmt.Sprintf("blocks.%d.id", b), safetensors.F32, []int64{8}, id); err != nil {
			return err
		}
		for j := 0; j < 4; j++ {
			err := w.AddFunc(fmt.Sprintf("blocks.%d.w%d", b, j), safetensors.BF16, []int64{int64(rows), cols}, func(out io.Writer) error {
				for left := rows * len(row); left > 0; left -= len(chunk) {
					if _, err := out.Write(chunk[:min(left, len(chunk))]); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return w.WriteFile(path)
}

// SynthRowValue is element i of every row of a synthetic matrix.
func SynthRowValue(i int) float32 {
	r := rand.New(rand.NewPCG(7, 7))
	var v float64
	for k := 0; k <= i; k++ {
		v = r.NormFloat64()
	}
	return safetensors.BF16ToF32(safetensors.F32ToBF16(float32(v)))
}
