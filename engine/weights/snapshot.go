package weights

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"h3studio/engine/weights/safetensors"
)

// Format is where a snapshot came from.
type Format string

const (
	// FormatOfficial is the MiniMaxAI/MiniMax-H3 tree (diffusers layout).
	FormatOfficial Format = "official"
	// FormatComfy is the Comfy-Org single-file repack.
	FormatComfy Format = "comfy"
	// FormatGGUF is a single-file tree whose DiT is a GGUF file.
	FormatGGUF Format = "gguf"
)

// QKVLayout is the row order of the fused qkv_proj weights. Both layouts
// have the same names and shapes, so reading one as the other loads
// without error and scrambles attention: the layout is decided from the
// snapshot's provenance and recorded, never inferred from the numbers.
type QKVLayout string

const (
	// QKVInterleaved groups rows per head: [h0 q,k,v][h1 q,k,v]...
	// (the MiniMaxAI release).
	QKVInterleaved QKVLayout = "interleaved"
	// QKVFlat stores [all q | all k | all v] (the Comfy-Org repack).
	QKVFlat QKVLayout = "flat"
)

// Component names, as the official tree names its folders.
const (
	Transformer = "transformer"
	TextEncoder = "text_encoder"
	VideoVAE    = "video_vae"
	AudioVAE    = "audio_vae"
)

// Snapshot is a discovered model tree.
type Snapshot struct {
	Root       string
	Format     Format
	Partitions []*Partition
	// Declared is the root's h3studio.json: what the model was trained
	// for (nil: none, the release's defaults apply).
	Declared *Declared
}

// Partition is one of the two task-specific model sets.
type Partition struct {
	// Name is "fl2va" or "ref2va".
	Name string
	Dir  string
	// Tasks and SigmaShift come from model_index.json's _minimax_h3 block
	// (empty / zero for single-file snapshots, which do not carry it).
	Tasks      []string
	SigmaShift map[string]float64
	Components []*Component
	// Tokenizer is the tokenizer.json path ("" when the snapshot has none).
	Tokenizer string
}

// Component returns the named component or nil.
func (p *Partition) Component(name string) *Component {
	for _, c := range p.Components {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Component is one model of a partition.
type Component struct {
	Name string
	// Path is what Open reads: a folder of shards or a single file.
	Path string
	// Config is the component's config.json ("" for single files, whose
	// configuration travels in the file's metadata).
	Config string
	// QKV is set for the transformer; QKVReason says how it was decided.
	QKV       QKVLayout
	QKVReason string
}

// Open maps the component's tensors.
func (c *Component) Open() (Source, error) {
	if strings.HasSuffix(c.Path, ".gguf") {
		return OpenGGUF(c.Path)
	}
	if g := filepath.Join(c.Path, GGUFName); fileExists(g) {
		return OpenGGUF(g)
	}
	if c.Synthetic() {
		return OpenSynthetic(filepath.Join(c.Path, SyntheticName))
	}
	return OpenSafetensors(c.Path)
}

// Synthetic reports whether the component is a manifest of generated
// tensors (WriteSynthetic) rather than stored weights.
func (c *Component) Synthetic() bool { return fileExists(filepath.Join(c.Path, SyntheticName)) }

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// SnapshotError reports a folder that is not a usable H3 snapshot.
type SnapshotError struct {
	Path string
	Msg  string
}

func (e *SnapshotError) Error() string { return "weights: " + e.Path + " " + e.Msg }

// modelIndex is the part of model_index.json discovery reads.
type modelIndex struct {
	ClassName string `json:"_class_name"`
	H3        *struct {
		SchemaVersion     int                `json:"schema_version"`
		Partition         string             `json:"partition"`
		Tasks             []string           `json:"tasks"`
		SigmaShiftScales  map[string]float64 `json:"sigma_shift_scales"`
		QKVLayoutOverride QKVLayout          `json:"qkv_layout"`
	} `json:"_minimax_h3"`
}

// partitionDirs are the official partition folders in the order Discover
// reports them.
var partitionDirs = []string{"FL2VA", "Ref2VA"}

// Discover identifies the snapshot at root: the official tree (or one of
// its partition folders), or a single-file tree (Comfy-Org repack or GGUF).
// It checks that every file the snapshot names exists; it does not read
// tensor data (Open does, and validates each header).
func Discover(root string) (*Snapshot, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, &SnapshotError{root, "cannot be read (" + err.Error() + ")"}
	}
	if !st.IsDir() {
		return discoverSingleFiles(filepath.Dir(root), []string{root})
	}
	if _, err := os.Stat(filepath.Join(root, "model_index.json")); err == nil {
		return discoverOfficial(root)
	}
	files, err := singleFileCandidates(root)
	if err != nil {
		return nil, err
	}
	if len(files) > 0 {
		return discoverSingleFiles(root, files)
	}
	return nil, &SnapshotError{root, "is not a MiniMax-H3 snapshot (no model_index.json, no diffusion_models/*minimax_h3* file, no .gguf); point -d at the downloaded MiniMax-H3 folder"}
}

func readModelIndex(path string) (*modelIndex, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, &SnapshotError{path, "cannot be read"}
	}
	var mi modelIndex
	if err := json.Unmarshal(raw, &mi); err != nil {
		return nil, &SnapshotError{path, "is not valid JSON: " + err.Error()}
	}
	return &mi, nil
}

func discoverOfficial(root string) (*Snapshot, error) {
	mi, err := readModelIndex(filepath.Join(root, "model_index.json"))
	if err != nil {
		return nil, err
	}
	s := &Snapshot{Root: root, Format: FormatOfficial}
	if s.Declared, err = readDeclared(root); err != nil {
		return nil, err
	}
	if mi.H3 != nil {
		// root is itself one partition folder.
		p, err := discoverPartition(root, mi)
		if err != nil {
			return nil, err
		}
		s.Partitions = append(s.Partitions, p)
		return s, nil
	}
	for _, d := range partitionDirs {
		dir := filepath.Join(root, d)
		pmi, err := readModelIndex(filepath.Join(dir, "model_index.json"))
		if err != nil {
			if _, statErr := os.Stat(dir); errors.Is(statErr, os.ErrNotExist) {
				continue
			}
			return nil, err
		}
		p, err := discoverPartition(dir, pmi)
		if err != nil {
			return nil, err
		}
		s.Partitions = append(s.Partitions, p)
	}
	if len(s.Partitions) == 0 {
		return nil, &SnapshotError{root, "has a model_index.json but no FL2VA/ or Ref2VA/ partition with a _minimax_h3 block; it is not a MiniMax-H3 snapshot"}
	}
	// The partition key is the only difference between the two DiTs, so
	// two folders claiming the same one would run one task with the other's
	// weights.
	if len(s.Partitions) == 2 && s.Partitions[0].Name == s.Partitions[1].Name {
		return nil, &SnapshotError{root, "has two partitions that both say _minimax_h3.partition = " + s.Partitions[0].Name + "; one model_index.json is wrong"}
	}
	return s, nil
}

func discoverPartition(dir string, mi *modelIndex) (*Partition, error) {
	if mi.H3 == nil {
		return nil, &SnapshotError{filepath.Join(dir, "model_index.json"), "has no _minimax_h3 block, so its partition (fl2va or ref2va) is unknown"}
	}
	name := mi.H3.Partition
	if name != "fl2va" && name != "ref2va" {
		return nil, &SnapshotError{filepath.Join(dir, "model_index.json"), fmt.Sprintf("_minimax_h3.partition is %q, want \"fl2va\" or \"ref2va\"", name)}
	}
	p := &Partition{Name: name, Dir: dir, Tasks: mi.H3.Tasks, SigmaShift: mi.H3.SigmaShiftScales}
	comps := []struct{ name, weights, config string }{
		{Transformer, "transformer", "transformer/config.json"},
		{TextEncoder, "text_encoder", "text_encoder/config.json"},
		{VideoVAE, "video_vae/source", "video_vae/source/config.json"},
		{AudioVAE, "audio_vae", "audio_vae/config.json"},
	}
	for _, c := range comps {
		comp := &Component{Name: c.name, Path: filepath.Join(dir, c.weights), Config: filepath.Join(dir, c.config)}
		if err := checkComponentFiles(comp); err != nil {
			return nil, err
		}
		p.Components = append(p.Components, comp)
	}
	tr := p.Component(Transformer)
	tr.QKV, tr.QKVReason = officialQKV(tr.Config)
	if mi.H3.QKVLayoutOverride != "" {
		tr.QKV, tr.QKVReason = mi.H3.QKVLayoutOverride, "stated by _minimax_h3.qkv_layout in model_index.json (written by h3studio convert)"
	}
	if tr.QKV != QKVInterleaved && tr.QKV != QKVFlat {
		return nil, &SnapshotError{tr.Config, fmt.Sprintf("states qkv layout %q, want interleaved or flat", tr.QKV)}
	}
	p.Tokenizer = findTokenizer(dir)
	return p, nil
}

// tokenizerFiles are where a snapshot keeps Qwen's tokenizer.json, relative
// to a partition folder (official tree) or the root (single-file trees), in
// the order they are tried: the official tree's tokenizer/ and
// text_encoder/, the Comfy-Org repack's text_encoders/, a bare file.
var tokenizerFiles = []string{"tokenizer/tokenizer.json", "text_encoder/tokenizer.json", "text_encoders/tokenizer.json", "tokenizer.json"}

// findTokenizer is the first of tokenizerFiles under dir, or "".
func findTokenizer(dir string) string {
	for _, t := range tokenizerFiles {
		if fileExists(filepath.Join(dir, t)) {
			return filepath.Join(dir, t)
		}
	}
	return ""
}

// Tokenizer is the snapshot's tokenizer.json: the first partition's that
// has one (the release's two partitions ship the same Qwen3 tokenizer), or
// "" when there is none.
func (s *Snapshot) Tokenizer() string {
	for _, p := range s.Partitions {
		if p.Tokenizer != "" {
			return p.Tokenizer
		}
	}
	return ""
}

// officialQKV decides the layout of a diffusers-layout transformer. The
// MiniMaxAI release interleaves rows per head; a folder converted from a
// flat source states its layout in config.json.
func officialQKV(config string) (QKVLayout, string) {
	raw, err := os.ReadFile(config)
	if err == nil {
		var c struct {
			H3Studio struct {
				QKVLayout QKVLayout `json:"qkv_layout"`
			} `json:"_h3studio"`
		}
		if json.Unmarshal(raw, &c) == nil && c.H3Studio.QKVLayout != "" {
			return c.H3Studio.QKVLayout, "stated by _h3studio.qkv_layout in transformer/config.json"
		}
	}
	return QKVInterleaved, "MiniMaxAI diffusers layout (model_index.json + sharded transformer/): the release groups qkv rows per head"
}

// checkComponentFiles verifies the config and every shard the index names.
func checkComponentFiles(c *Component) error {
	if _, err := os.Stat(c.Config); err != nil {
		return &SnapshotError{c.Config, "is missing; the snapshot is incomplete"}
	}
	if fileExists(filepath.Join(c.Path, GGUFName)) || c.Synthetic() {
		return nil // converted by h3studio convert, or generated (WriteSynthetic)
	}
	idx := filepath.Join(c.Path, safetensors.IndexName)
	raw, err := os.ReadFile(idx)
	if errors.Is(err, os.ErrNotExist) {
		single := filepath.Join(c.Path, "model.safetensors")
		if _, err := os.Stat(single); err != nil {
			return &SnapshotError{c.Path, "has neither model.safetensors, " + safetensors.IndexName + " nor " + GGUFName + "; the snapshot is incomplete"}
		}
		return nil
	}
	if err != nil {
		return &SnapshotError{idx, "cannot be read"}
	}
	var ix safetensors.Index
	if err := json.Unmarshal(raw, &ix); err != nil {
		return &SnapshotError{idx, "is not valid JSON: " + err.Error()}
	}
	seen := map[string]bool{}
	var shards []string
	for _, s := range ix.WeightMap {
		if !seen[s] {
			seen[s] = true
			shards = append(shards, s)
		}
	}
	sort.Strings(shards)
	for _, s := range shards {
		if _, err := os.Stat(filepath.Join(c.Path, s)); err != nil {
			return &SnapshotError{filepath.Join(c.Path, s), "is missing (listed in " + safetensors.IndexName + "); download it again"}
		}
	}
	return nil
}
