package safetensors

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// rawFile builds a file by hand from a header string and data, as the
// format's specification describes it, independent of Writer.
func rawFile(header string, data []byte) []byte {
	out := make([]byte, 8, 8+len(header)+len(data))
	binary.LittleEndian.PutUint64(out, uint64(len(header)))
	out = append(out, header...)
	return append(out, data...)
}

func parseRaw(b []byte) (*Header, error) {
	n, err := ReadHeaderLength(b, int64(len(b)))
	if err != nil {
		return nil, err
	}
	return ParseHeader(b[8:8+n], int64(len(b)))
}

func TestParseHeaderValid(t *testing.T) {
	// Two tensors given out of order in the JSON, one scalar, one empty.
	hdr := `{"b":{"dtype":"BF16","shape":[2,2],"data_offsets":[4,12]},"__metadata__":{"format":"pt"},` +
		`"a":{"dtype":"F32","shape":[],"data_offsets":[0,4]},"e":{"dtype":"I64","shape":[0,3],"data_offsets":[12,12]}}  `
	h, err := parseRaw(rawFile(hdr, make([]byte, 12)))
	if err != nil {
		t.Fatal(err)
	}
	if h.Metadata["format"] != "pt" || len(h.Tensors) != 3 || h.DataOffset != int64(8+len(hdr)) || h.DataSize != 12 {
		t.Fatalf("header = %+v", h)
	}
	if h.Tensors[0].Name != "a" || h.Tensors[1].Name != "b" || h.Tensors[1].Elements() != 4 {
		t.Fatalf("tensors not in data order: %+v", h.Tensors)
	}
}

func TestParseHeaderInvalid(t *testing.T) {
	f32 := func(name string, b, e int) string {
		return `"` + name + `":{"dtype":"F32","shape":[` + strconv.Itoa((e-b)/4) + `],"data_offsets":[` + strconv.Itoa(b) + `,` + strconv.Itoa(e) + `]}`
	}
	cases := []struct {
		name, hdr string
		data      int
		want      string
	}{
		{"not json", `{"a":`, 0, "not JSON"},
		{"leading space", ` {}`, 0, "does not start"},
		{"trailing garbage", `{}x`, 0, "trailing bytes"},
		{"duplicate", `{` + f32("a", 0, 4) + `,` + f32("a", 4, 8) + `}`, 8, "duplicate"},
		{"unknown dtype", `{"a":{"dtype":"F12","shape":[1],"data_offsets":[0,4]}}`, 4, "unknown dtype"},
		{"shape mismatch", `{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, 8, "needs 12 bytes"},
		{"negative dim", `{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, 4, "malformed"},
		{"overflow", `{"a":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, 0, "overflows"},
		{"reversed offsets", `{"a":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}}`, 4, "increasing"},
		{"hole", `{` + f32("a", 0, 4) + `,` + f32("b", 8, 12) + `}`, 12, "hole"},
		{"overlap", `{` + f32("a", 0, 8) + `,` + f32("b", 4, 8) + `}`, 8, "overlap"},
		{"trailing data", `{` + f32("a", 0, 4) + `}`, 8, "cover 4 bytes"},
		{"short data", `{` + f32("a", 0, 8) + `}`, 4, "cover 8 bytes"},
		{"missing field", `{"a":{"dtype":"F32","shape":[1]}}`, 4, "exactly"},
		{"extra field", `{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"x":1}}`, 4, "malformed"},
		{"metadata not strings", `{"__metadata__":{"a":1}}`, 0, "strings"},
		{"metadata duplicate", `{"__metadata__":{"a":"1","a":"2"}}`, 0, "duplicate"},
		{"bad utf8", "{\"\xff\":1}", 0, "UTF-8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseRaw(rawFile(c.hdr, make([]byte, c.data)))
			var fe *FormatError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a *FormatError containing %q", err, c.want)
			}
		})
	}
}

func TestHeaderLength(t *testing.T) {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, MaxHeaderSize+1)
	if _, err := ReadHeaderLength(b, 1<<40); err == nil || !strings.Contains(err.Error(), "cap") {
		t.Fatalf("oversized header: err = %v", err)
	}
	binary.LittleEndian.PutUint64(b, 100)
	if _, err := ReadHeaderLength(b, 50); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Fatalf("truncated header: err = %v", err)
	}
	binary.LittleEndian.PutUint64(b, math.MaxUint64)
	if _, err := ReadHeaderLength(b, 1<<40); err == nil {
		t.Fatal("length 2^64-1 accepted")
	}
	if _, err := ReadHeaderLength(b[:3], 3); err == nil {
		t.Fatal("3-byte file accepted")
	}
}

func TestOpenNamesFileAndTensor(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "bad.safetensors")
	if err := os.WriteFile(p, rawFile(`{"w":{"dtype":"F16","shape":[3],"data_offsets":[0,4]}}`, make([]byte, 4)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(p)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Path != p || fe.Tensor != "w" {
		t.Fatalf("err = %v, want a FormatError naming %s and tensor w", err, p)
	}
}
