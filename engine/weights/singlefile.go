package weights

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// singleFileFolders are where the Comfy-Org repack keeps each kind of file.
var singleFileFolders = []string{".", "diffusion_models", "text_encoders", "vae"}

func singleFileCandidates(root string) ([]string, error) {
	var out []string
	for _, d := range singleFileFolders {
		entries, err := os.ReadDir(filepath.Join(root, d))
		if err != nil {
			continue
		}
		for _, e := range entries {
			n := strings.ToLower(e.Name())
			if e.IsDir() || !(strings.HasSuffix(n, ".safetensors") || strings.HasSuffix(n, ".gguf")) {
				continue
			}
			if classify(n) != "" {
				out = append(out, filepath.Join(root, d, e.Name()))
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// classify names the component a repack file holds, from its file name
// (the repack's names are its only description of the role).
func classify(name string) string {
	n := strings.ReplaceAll(strings.ToLower(filepath.Base(name)), "-", "_")
	switch {
	case strings.Contains(n, "video_vae"):
		return VideoVAE
	case strings.Contains(n, "audio_vae"):
		return AudioVAE
	case strings.Contains(n, "qwen3vl") || strings.Contains(n, "text_encoder"):
		return TextEncoder
	case strings.Contains(n, "minimax_h3") || strings.Contains(n, "fl2va") || strings.Contains(n, "ref2va"):
		return Transformer
	}
	return ""
}

func partitionOfName(name string) string {
	n := strings.ToLower(filepath.Base(name))
	switch {
	case strings.Contains(n, "ref2va"):
		return "ref2va"
	case strings.Contains(n, "fl2va"):
		return "fl2va"
	}
	return ""
}

// discoverSingleFiles builds partitions from repack files: one per DiT
// file, each sharing the tree's text encoder and VAEs.
func discoverSingleFiles(root string, files []string) (*Snapshot, error) {
	s := &Snapshot{Root: root, Format: FormatComfy}
	shared := map[string]string{}
	var dits []string
	for _, f := range files {
		switch kind := classify(f); kind {
		case Transformer:
			dits = append(dits, f)
		case "":
			return nil, &SnapshotError{f, "is not a MiniMax-H3 file (its name names no H3 component)"}
		default:
			if prev, dup := shared[kind]; dup && filepath.Ext(prev) == ".safetensors" {
				continue // prefer the first safetensors copy; a GGUF alternative is ignored
			}
			shared[kind] = f
		}
	}
	if len(dits) == 0 {
		return nil, &SnapshotError{root, "has no MiniMax-H3 transformer file (diffusion_models/minimax_h3_{fl2va,ref2va}*.safetensors or .gguf)"}
	}
	for _, d := range dits {
		name := partitionOfName(d)
		if name == "" {
			name = partitionFromMetadata(d)
		}
		if name == "" {
			return nil, &SnapshotError{d, "names neither fl2va nor ref2va, and the two partitions' files are otherwise identical; rename it to say which"}
		}
		if strings.HasSuffix(strings.ToLower(d), ".gguf") {
			s.Format = FormatGGUF
		}
		tr := &Component{Name: Transformer, Path: d}
		var err error
		if tr.QKV, tr.QKVReason, err = singleFileQKV(d); err != nil {
			return nil, err
		}
		p := &Partition{Name: name, Dir: root, Components: []*Component{tr}}
		p.Tokenizer = findTokenizer(root)
		for _, kind := range []string{TextEncoder, VideoVAE, AudioVAE} {
			if f, ok := shared[kind]; ok {
				p.Components = append(p.Components, &Component{Name: kind, Path: f})
			}
		}
		s.Partitions = append(s.Partitions, p)
	}
	sort.Slice(s.Partitions, func(i, j int) bool { return s.Partitions[i].Name < s.Partitions[j].Name })
	return s, nil
}

// singleFileQKV reads the layout a single file states, or derives it from
// what produced the file.
func singleFileQKV(path string) (QKVLayout, string, error) {
	src, err := (&Component{Path: path}).Open()
	if err != nil {
		return "", "", err
	}
	defer src.Close()
	md := src.Metadata()
	if l := QKVLayout(md["h3studio.qkv_layout"]); l != "" {
		if l != QKVInterleaved && l != QKVFlat {
			return "", "", &SnapshotError{path, "states qkv layout " + string(l) + ", want interleaved or flat"}
		}
		return l, "stated by the file's h3studio.qkv_layout metadata", nil
	}
	if strings.HasSuffix(strings.ToLower(path), ".gguf") {
		return QKVFlat, "GGUF without h3studio.qkv_layout: community H3 GGUFs are converted from the Comfy-Org repack, whose rows are flat", nil
	}
	var cfg map[string]json.RawMessage
	if json.Unmarshal([]byte(md["config"]), &cfg) == nil {
		if _, ok := cfg["transformer"]; ok {
			return QKVFlat, "Comfy-Org repack (config in the file's __metadata__): the repack stores qkv rows flat", nil
		}
	}
	return "", "", &SnapshotError{path, "does not say how its qkv rows are ordered (no Comfy-Org config metadata, no h3studio.qkv_layout); loading it would risk scrambled attention, so it is refused"}
}

func partitionFromMetadata(path string) string {
	src, err := (&Component{Path: path}).Open()
	if err != nil {
		return ""
	}
	defer src.Close()
	md := src.Metadata()
	for _, k := range []string{"h3studio.partition", "_minimax_h3_partition"} {
		if v := md[k]; v == "fl2va" || v == "ref2va" {
			return v
		}
	}
	return ""
}
