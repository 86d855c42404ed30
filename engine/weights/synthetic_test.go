package weights

import (
	"io/fs"
	"path/filepath"
	"slices"
	"testing"

	"h3studio/engine/arch"
	"h3studio/engine/ggml"
)

// TestSyntheticReleaseSnapshot writes the release's synthetic snapshot:
// it must discover as a T2VA-capable snapshot, declare every parameter of
// the release's four configs at their stored sizes, and take almost
// nothing on disk (no tensor data is written).
func TestSyntheticReleaseSnapshot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "synthetic")
	if err := WriteSynthetic(dir, SyntheticOptions{Config: SyntheticRelease, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	var disk int64
	if err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			disk += info.Size()
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const maxDisk = 4 << 20
	if disk > maxDisk {
		t.Errorf("the synthetic release snapshot takes %d B on disk, want under %d", disk, maxDisk)
	}
	s, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Partitions) != 1 || s.Partitions[0].Name != "fl2va" || !slices.Contains(s.Partitions[0].Tasks, "t2va") {
		t.Fatalf("partitions %+v, want one fl2va partition with t2va", s.Partitions)
	}
	rel, err := arch.Release()
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.Partitions[0].Component(Transformer).Open()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, ok := src.(Seeded); !ok {
		t.Fatal("the transformer did not open as a seeded source")
	}
	var params, bytes int64
	for _, ti := range src.Tensors() {
		params += ti.Elements()
		bytes += ti.Bytes
	}
	if params != rel.DiT.Params() {
		t.Errorf("synthetic DiT has %d parameters, the release config %d", params, rel.DiT.Params())
	}
	if f := src.Files(); len(f) != 1 || f[0].Size != bytes {
		t.Errorf("files %+v, want one of the tensors' stored %d B", f, bytes)
	}
	t.Logf("release DiT: %d parameters, %.1f GB stored, %d B on disk for the whole snapshot", params, float64(bytes)/1e9, disk)
}

// TestSyntheticLoadFillsOnDevice loads tensors of a synthetic source:
// generated ones must be filled on the device (nothing copied), with the
// values the source's Data computes on the host, and the embedding table's
// rows read alone must be the table's rows.
func TestSyntheticLoadFillsOnDevice(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "synthetic")
	if err := WriteSynthetic(dir, SyntheticOptions{Config: SyntheticTiny, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	s, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	src, err := s.Partitions[0].Component(Transformer).Open()
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	b, err := ggml.NewBackend(ggml.BackendOptions{Device: ggml.DeviceCPU, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var mod struct {
		W    *ggml.Tensor `st:"blocks.0.attn.out_proj.weight"`
		Norm *ggml.Tensor `st:"blocks.0.norm1.weight"`
		Rope *ggml.Tensor `st:"rope.inv_freq"`
	}
	m, err := LoadModule(b, src, &mod, LoadOptions{Store: func(TensorInfo) (ggml.DType, error) { return ggml.BF16, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Free()
	rope, _ := src.Lookup("rope.inv_freq")
	if m.Copied != rope.Bytes || m.Filled == 0 {
		t.Errorf("copied %d B, filled %d B; want only the fixed rope table copied (%d B stored) and the rest filled", m.Copied, m.Filled, rope.Bytes)
	}
	for _, c := range []struct {
		name string
		t    *ggml.Tensor
	}{{"blocks.0.attn.out_proj.weight", mod.W}, {"blocks.0.norm1.weight", mod.Norm}} {
		want, err := Float32(src, c.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.t.F32(); !slices.Equal(got, want) {
			t.Errorf("%s on the device differs from the source's host values (first %v, want %v)", c.name, got[:4], want[:4])
		}
	}
	te, err := s.Partitions[0].Component(TextEncoder).Open()
	if err != nil {
		t.Fatal(err)
	}
	defer te.Close()
	const embed = "model.language_model.embed_tokens.weight"
	info, _ := te.Lookup(embed)
	data, _ := te.Data(embed)
	n := info.Bytes / info.Shape[0]
	for _, i := range []int{0, 1, int(info.Shape[0]) - 1} {
		row, ok := Row(te, embed, i)
		if !ok || !slices.Equal(row, data[int64(i)*n:int64(i+1)*n]) {
			t.Errorf("row %d of %s read alone differs from the table's", i, embed)
		}
	}
}
