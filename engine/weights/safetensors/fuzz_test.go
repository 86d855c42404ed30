package safetensors

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseHeader feeds whole files to the header parser. Seeds are the
// files under testdata plus go's corpus in testdata/fuzz. Whatever the
// input, an accepted header must describe the data section exactly.
func FuzzParseHeader(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.safetensors"))
	for _, p := range seeds {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(rawFile(`{"a":{"dtype":"BF16","shape":[2,1],"data_offsets":[0,4]}}`, make([]byte, 4)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<20 {
			return
		}
		h, err := parseRaw(b)
		if err != nil {
			return
		}
		var pos int64
		for _, ti := range h.Tensors {
			if ti.Begin != pos || ti.End < ti.Begin || ti.Elements()*ti.DType.Size() != ti.Bytes() {
				t.Fatalf("accepted inconsistent tensor %+v", ti)
			}
			pos = ti.End
		}
		if pos != h.DataSize || h.DataOffset+h.DataSize != int64(len(b)) {
			t.Fatalf("accepted header does not cover the file: %d+%d vs %d", h.DataOffset, pos, len(b))
		}
	})
}
