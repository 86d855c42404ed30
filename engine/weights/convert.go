package weights

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"h3studio/engine/ggml"
	"h3studio/engine/weights/gguf"
)

// ConvertOptions configures Convert.
type ConvertOptions struct {
	// To is the weight type of the converted matrices: ggml.Q8_0 or ggml.Q4_K.
	To ggml.DType
	// Progress, when set, is called with bytes of source tensors done and
	// in total, and the component being written.
	Progress func(done, total int64, what string)
}

// GGUFName is the weights file of a converted component folder.
const GGUFName = "model.gguf"

// convertChunk bounds the float32 staging of one tensor's conversion.
const convertChunk = 8 << 20

// Convert writes a quantized copy of the snapshot at src into dst, in the
// official folder layout: each partition's transformer and text encoder
// become model.gguf (matrices in o.To, vectors and the release's F32
// islands kept), everything else (configs, tokenizer, VAEs) is linked or
// copied. The transformer config records the QKV layout, so a converted
// Comfy-Org snapshot stays flat. Output goes to a temporary sibling folder
// renamed into place at the end; memory is bounded by a few MB of staging
// per tensor, whatever the checkpoint's size.
func Convert(src, dst string, o ConvertOptions) (err error) {
	if o.To != ggml.Q8_0 && o.To != ggml.Q4_K {
		return fmt.Errorf("weights: convert: cannot quantize to %s (choose q8_0 or q4_k)", o.To)
	}
	snap, err := Discover(src)
	if err != nil {
		return err
	}
	if snap.Format != FormatOfficial {
		return fmt.Errorf("weights: convert: %s is a %s snapshot; convert reads the official MiniMax-H3 folder layout", src, snap.Format)
	}
	if entries, err := os.ReadDir(dst); err == nil && len(entries) > 0 {
		return fmt.Errorf("weights: convert: %s is not empty; choose a new output folder", dst)
	}
	parent := filepath.Dir(filepath.Clean(dst))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dst)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	c := &converter{o: o}
	for _, p := range snap.Partitions {
		for _, comp := range []string{Transformer, TextEncoder} {
			if info, err := os.Stat(p.Component(comp).Path); err == nil && info.IsDir() {
				c.total += dirTensorBytes(p.Component(comp))
			}
		}
	}
	if err := copyTree(snap.Root, tmp, func(rel string) bool { return skipOnCopy(snap, rel) }); err != nil {
		return err
	}
	for _, p := range snap.Partitions {
		rel, _ := filepath.Rel(snap.Root, p.Dir)
		for _, comp := range []string{Transformer, TextEncoder} {
			if err := c.component(p, p.Component(comp), filepath.Join(tmp, rel, comp)); err != nil {
				return err
			}
		}
	}
	os.Remove(dst)
	return os.Rename(tmp, dst)
}

// skipOnCopy leaves out the weights Convert rewrites.
func skipOnCopy(s *Snapshot, rel string) bool {
	base := filepath.Base(rel)
	for _, p := range s.Partitions {
		prel, _ := filepath.Rel(s.Root, p.Dir)
		for _, comp := range []string{Transformer, TextEncoder} {
			if filepath.Dir(rel) == filepath.Join(prel, comp) && (strings.HasSuffix(base, ".safetensors") || base == "model.safetensors.index.json" || base == GGUFName) {
				return true
			}
		}
	}
	return false
}

func dirTensorBytes(c *Component) int64 {
	src, err := c.Open()
	if err != nil {
		return 0
	}
	defer src.Close()
	var n int64
	for _, t := range src.Tensors() {
		n += t.Bytes
	}
	return n
}

type converter struct {
	o     ConvertOptions
	done  int64
	total int64
}

// targetType picks a tensor's converted type: matrices (2-D and larger
// weights outside the release's F32 islands) become to when their rows
// are whole blocks of it, else q8_0 when rows are whole q8_0 blocks (as
// the real AdaLN input width 2688 is not for q4_K's 256), else they keep
// their type (ok false).
func targetType(info TensorInfo, to ggml.DType) (ggml.DType, bool) {
	if len(info.Shape) < 2 || info.DType == F32 || !strings.HasSuffix(info.Name, ".weight") {
		return 0, false
	}
	row := GGMLShape(info.Shape)[0]
	for _, dt := range []ggml.DType{to, ggml.Q8_0} {
		if row%dt.BlockSize() == 0 {
			return dt, true
		}
	}
	return 0, false
}

func (c *converter) component(p *Partition, comp *Component, outDir string) error {
	src, err := comp.Open()
	if err != nil {
		return err
	}
	defer src.Close()
	w := &gguf.Writer{}
	w.SetString("general.architecture", "minimax_h3")
	w.SetString("h3studio.component", comp.Name)
	w.SetString("h3studio.partition", p.Name)
	if comp.QKV != "" {
		w.SetString("h3studio.qkv_layout", string(comp.QKV))
	}
	what := p.Name + " " + comp.Name
	for _, info := range src.Tensors() {
		info := info
		dims := ggufDims(info.Shape)
		if len(info.Shape) > 4 {
			shape, _ := json.Marshal(info.Shape)
			w.SetString("h3studio.shape."+info.Name, string(shape))
		}
		dt, quant := targetType(info, c.o.To)
		if !quant {
			t, ok := gguf.ParseType(string(info.DType))
			if !ok {
				return fmt.Errorf("weights: convert: %s: dtype %s cannot be stored in GGUF", info.Name, info.DType)
			}
			raw, _ := src.Data(info.Name)
			if err := w.AddFunc(info.Name, t, dims, func(bw *bufio.Writer) error {
				_, err := bw.Write(raw)
				c.advance(info.Bytes, what)
				return err
			}, info.Bytes); err != nil {
				return err
			}
			continue
		}
		to := gguf.Q8_0
		if dt == ggml.Q4_K {
			to = gguf.Q4_K
		}
		if err := w.AddFunc(info.Name, to, dims, func(bw *bufio.Writer) error {
			return c.quantize(bw, src, info, dt)
		}, to.RowBytes(info.Elements())); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return err
	}
	if err := w.WriteFile(filepath.Join(outDir, GGUFName)); err != nil {
		return err
	}
	if comp.Name == Transformer {
		return markQKV(filepath.Join(outDir, "config.json"), comp.QKV)
	}
	return nil
}

// quantize converts a tensor a chunk of rows at a time.
func (c *converter) quantize(w io.Writer, src Source, info TensorInfo, dt ggml.DType) error {
	raw, _ := src.Data(info.Name)
	row := GGMLShape(info.Shape)[0]
	rowBytes := info.DType.RowBytes(int64(row))
	rows := int(info.Elements()) / row
	step := max(1, convertChunk/(4*row))
	for r := 0; r < rows; r += step {
		n := min(step, rows-r)
		part := raw[int64(r)*rowBytes : int64(r+n)*rowBytes]
		v, err := toFloat32(info.DType, part)
		if err != nil {
			return fmt.Errorf("%s: %w", info.Name, err)
		}
		if _, err := w.Write(ggml.Quantize(dt, v, row)); err != nil {
			return err
		}
		c.advance(int64(len(part)), info.Name)
	}
	return nil
}

func toFloat32(dt DType, raw []byte) ([]float32, error) {
	out := make([]float32, len(raw)/2)
	switch dt {
	case BF16:
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(raw[2*i:])) << 16)
		}
	case F16:
		out = ggml.Dequantize(ggml.F16, raw, len(raw)/2)
	default:
		return nil, fmt.Errorf("cannot quantize from %s", dt)
	}
	return out, nil
}

func (c *converter) advance(n int64, what string) {
	c.done += n
	if c.o.Progress != nil {
		c.o.Progress(c.done, c.total, what)
	}
}

// ggufDims reverses a checkpoint shape into GGUF order, merging the
// fastest axes of tensors with more than four (GGUF's limit); the full
// shape travels in an h3studio.shape.<name> key.
func ggufDims(shape []int64) []int64 {
	d := make([]int64, len(shape))
	for i, s := range shape {
		d[len(shape)-1-i] = s
	}
	if len(d) == 0 {
		return []int64{1}
	}
	for len(d) > 4 {
		d = append([]int64{d[0] * d[1]}, d[2:]...)
	}
	return d
}

// markQKV records the layout in the copied transformer config.
func markQKV(path string, l QKVLayout) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return fmt.Errorf("weights: convert: %s: %w", path, err)
	}
	cfg["_h3studio"] = map[string]any{"qkv_layout": l}
	os.Remove(path) // it may be a hard link to the source's file
	return writeJSON(path, cfg)
}

// copyTree recreates src under dst, hard-linking files where the file
// system allows it and copying otherwise; skip drops files by path.
func copyTree(src, dst string, skip func(rel string) bool) error {
	return filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if strings.HasPrefix(filepath.Base(p), ".") && rel != "." {
			if info.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if skip(rel) {
			return nil
		}
		if os.Link(p, target) == nil {
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
