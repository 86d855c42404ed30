package weights

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"h3studio/engine/weights/gguf"
	"h3studio/engine/weights/safetensors"
)

// Report describes a snapshot for `h3studio info` (its JSON form is the
// contract in ARCHITECTURE.md).
type Report struct {
	Root       string            `json:"root"`
	Format     Format            `json:"format"`
	QKVLayout  QKVLayout         `json:"qkv_layout"`
	Partitions []PartitionReport `json:"partitions"`
}

// PartitionReport describes one partition.
type PartitionReport struct {
	Name       string            `json:"name"`
	Tasks      []string          `json:"tasks,omitempty"`
	Tokenizer  string            `json:"tokenizer,omitempty"`
	Components []ComponentReport `json:"components"`
}

// Residency values of ComponentReport.
const (
	// ResidencyZeroCopy: every tensor can be placed over the file mapping.
	ResidencyZeroCopy = "zero-copy"
	// ResidencyCopy: no tensor can; weights are copied from the mapping
	// into backend buffers (the DiT block by block when streamed).
	ResidencyCopy = "copy"
	// ResidencyMixed: some tensors map zero-copy, the rest are copied.
	ResidencyMixed = "mixed"
)

// ComponentReport describes one component.
type ComponentReport struct {
	Name      string        `json:"name"`
	DType     string        `json:"dtype"`
	Params    int64         `json:"params"`
	Bytes     int64         `json:"bytes"`
	Tensors   int           `json:"tensors"`
	Residency string        `json:"residency"`
	QKVLayout QKVLayout     `json:"qkv_layout,omitempty"`
	QKVReason string        `json:"qkv_reason,omitempty"`
	Shards    []ShardReport `json:"shards"`
}

// ShardReport describes one file of a component.
type ShardReport struct {
	Path       string `json:"path"`
	DataOffset int64  `json:"data_offset"`
	Aligned16  bool   `json:"aligned16"`
	Bytes      int64  `json:"bytes"`
}

// Describe discovers the snapshot at root and opens (and so validates)
// every file of every component.
func Describe(root string) (*Report, error) {
	snap, err := Discover(root)
	if err != nil {
		return nil, err
	}
	r := &Report{Root: snap.Root, Format: snap.Format}
	for _, p := range snap.Partitions {
		pr := PartitionReport{Name: p.Name, Tasks: p.Tasks, Tokenizer: rel(snap.Root, p.Tokenizer)}
		for _, c := range p.Components {
			cr, err := describeComponent(snap.Root, c)
			if err != nil {
				return nil, err
			}
			if c.Name == Transformer && r.QKVLayout == "" {
				r.QKVLayout = c.QKV
			}
			pr.Components = append(pr.Components, cr)
		}
		r.Partitions = append(r.Partitions, pr)
	}
	return r, nil
}

func rel(root, p string) string {
	if p == "" {
		return ""
	}
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}

func describeComponent(root string, c *Component) (ComponentReport, error) {
	src, err := c.Open()
	if err != nil {
		return ComponentReport{}, damaged(err)
	}
	defer src.Close()
	cr := ComponentReport{Name: c.Name, QKVLayout: c.QKV, QKVReason: c.QKVReason}
	byType := map[DType]int64{}
	mapped := 0
	for _, t := range src.Tensors() {
		cr.Params += t.Elements()
		cr.Bytes += t.Bytes
		byType[t.DType] += t.Bytes
		if _, err := GGMLType(t.DType); err == nil && t.Offset%MapAlign == 0 {
			mapped++
		}
	}
	cr.Tensors = len(src.Tensors())
	switch mapped {
	case cr.Tensors:
		cr.Residency = ResidencyZeroCopy
	case 0:
		cr.Residency = ResidencyCopy
	default:
		cr.Residency = ResidencyMixed
	}
	types := make([]DType, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Slice(types, func(i, j int) bool { return byType[types[i]] > byType[types[j]] })
	names := make([]string, len(types))
	for i, t := range types {
		names[i] = string(t)
	}
	cr.DType = strings.Join(names, "+")
	for _, f := range src.Files() {
		cr.Shards = append(cr.Shards, ShardReport{Path: rel(root, f.Path), DataOffset: f.DataOffset, Aligned16: f.Aligned16(), Bytes: f.Size})
	}
	return cr, nil
}

// damaged turns a file format error into the sentence a user can act on.
func damaged(err error) error {
	var st *safetensors.FormatError
	var gg *gguf.FormatError
	switch {
	case errors.As(err, &st):
		return fmt.Errorf("weights: %s is damaged or incomplete (%s); download it again", st.Path, strings.TrimPrefix(err.Error(), "safetensors: invalid format in "+st.Path+": "))
	case errors.As(err, &gg):
		return fmt.Errorf("weights: %s is damaged or incomplete (%s); download it again", gg.Path, strings.TrimPrefix(err.Error(), "gguf: invalid file "+gg.Path+": "))
	}
	return err
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "MiniMax-H3 snapshot %s (%s layout)\n", r.Root, r.Format)
	for _, p := range r.Partitions {
		fmt.Fprintf(&b, "\npartition %s", p.Name)
		if len(p.Tasks) > 0 {
			fmt.Fprintf(&b, " (tasks %s)", strings.Join(p.Tasks, ", "))
		}
		b.WriteString("\n")
		if p.Tokenizer != "" {
			fmt.Fprintf(&b, "  tokenizer     %s\n", p.Tokenizer)
		}
		for _, c := range p.Components {
			fmt.Fprintf(&b, "  %-13s %s params, %s, %s in %d file(s), %d tensors, %s\n",
				c.Name, humanCount(c.Params), c.DType, humanBytes(c.Bytes), len(c.Shards), c.Tensors, residencyText(c.Residency))
			if c.QKVLayout != "" {
				fmt.Fprintf(&b, "                qkv rows %s: %s\n", c.QKVLayout, c.QKVReason)
			}
			for _, s := range c.Shards {
				fmt.Fprintf(&b, "                %s  data at byte %d (%d mod 16)\n", s.Path, s.DataOffset, s.DataOffset%16)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func residencyText(r string) string {
	switch r {
	case ResidencyZeroCopy:
		return "zero-copy from the file mapping"
	case ResidencyCopy:
		return "copied from the mapping in bounded pieces (data not 32-byte aligned)"
	}
	return "partly zero-copy, partly copied"
}

func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f B", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.2f M", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f K", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
