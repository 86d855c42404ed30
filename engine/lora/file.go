package lora

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"h3studio/engine/weights"
)

// Layout is a LoRA file's key convention.
type Layout string

// The layouts Open recognises.
const (
	// PEFT: <module>.lora_A.weight / .lora_B.weight in the checkpoint's
	// own module names (larryvrh's Turbo, PEFT's save_pretrained).
	PEFT Layout = "peft"
	// Kohya: <module>.lora_down.weight / .lora_up.weight / .alpha
	// (ComfyUI's and kohya's trainers; lightx2v's "_comfyui" files).
	Kohya Layout = "comfyui"
	// Diffusers: PEFT or kohya suffixes over diffusers' module names, with
	// attention split into to_q / to_k / to_v (lightx2v's diffusers files).
	Diffusers Layout = "diffusers"
)

// half says which factor of a pair a tensor is.
type half int

const (
	halfA     half = iota // down: [rank, in]
	halfB                 // up: [out, rank]
	halfAlpha             // scalar
)

// rawPair is one module's tensors as the file names them.
type rawPair struct {
	key   string // the file's module name, prefixes stripped
	a, b  *weights.TensorInfo
	alpha *weights.TensorInfo
}

// File is an opened LoRA file: its header parsed and its pairs grouped,
// no tensor data read.
type File struct {
	Path     string
	Layout   Layout
	Metadata map[string]string
	src      weights.Source
	pairs    map[string]*rawPair
	other    []string // tensors that are not part of a pair
	kohya    bool     // names written with underscores (lora_unet_...)
	// peftDefault: PEFT's ".default." adapter infix, which only
	// DiffSynth-Studio's saver leaves in (qkv.go reads it).
	peftDefault bool
}

// keyPrefixes are stripped from every name, in this order, each at most
// once: PEFT's wrapper, then the trainers' model prefixes.
var keyPrefixes = []string{"base_model.model.", "model.diffusion_model.", "diffusion_model.", "transformer."}

// kohyaPrefix marks kohya's underscore names (lora_unet_blocks_0_attn_qkv_proj).
const kohyaPrefix = "lora_unet_"

// suffixes map the pair suffixes of both conventions to their half; the
// bool says the PEFT convention.
var suffixes = []struct {
	s    string
	h    half
	peft bool
}{
	{".lora_A.default.weight", halfA, true}, {".lora_B.default.weight", halfB, true},
	{".lora_A.weight", halfA, true}, {".lora_B.weight", halfB, true},
	{".lora_down.weight", halfA, false}, {".lora_up.weight", halfB, false},
	// without ".weight": PDD's trunk (.lora_down/.lora_up), TaoMate's (.lora_a/.lora_b)
	{".lora_down", halfA, false}, {".lora_up", halfB, false},
	{".lora_a", halfA, true}, {".lora_b", halfB, true},
	{".alpha", halfAlpha, false},
}

// Open reads the header of a LoRA safetensors file and groups its tensors
// into pairs. It reads no tensor data; Match decides whether it fits.
func Open(path string) (*File, error) {
	if !strings.EqualFold(filepath.Ext(path), ".safetensors") {
		return nil, &Misfit{Path: path, Kind: NotLoRA, Detail: "not a .safetensors file"}
	}
	src, err := weights.OpenSafetensors(path)
	var pathErr *fs.PathError
	switch {
	case errors.As(err, &pathErr): // missing or unreadable: the caller says which
		return nil, fmt.Errorf("lora: open %s: %w", path, err)
	case err != nil:
		return nil, &Misfit{Path: path, Kind: NotLoRA, Detail: err.Error()}
	}
	f := &File{Path: path, Metadata: src.Metadata(), src: src, pairs: map[string]*rawPair{}}
	var peft, kohya int
	for _, t := range src.Tensors() {
		key, h, isPEFT, ok := f.split(t.Name)
		if !ok {
			f.other = append(f.other, t.Name)
			continue
		}
		p := f.pairs[key]
		if p == nil {
			p = &rawPair{key: key}
			f.pairs[key] = p
		}
		info := t
		switch h {
		case halfA:
			p.a = &info
		case halfB:
			p.b = &info
		case halfAlpha:
			p.alpha = &info
		}
		if h != halfAlpha {
			if isPEFT {
				peft++
			} else {
				kohya++
			}
		}
	}
	switch {
	case peft+kohya == 0:
		src.Close()
		return nil, &Misfit{Path: path, Kind: NotLoRA, Detail: "no lora_A/lora_B or lora_down/lora_up tensors"}
	case peft > 0 && kohya > 0:
		src.Close()
		return nil, &Misfit{Path: path, Kind: NotLoRA, Detail: "mixes PEFT (lora_A/lora_B) and kohya (lora_down/lora_up) names"}
	case f.diffusersNames():
		f.Layout = Diffusers
	case peft > 0:
		f.Layout = PEFT
	default:
		f.Layout = Kohya
	}
	return f, nil
}

// split parses one tensor name into its module key and half.
func (f *File) split(name string) (key string, h half, peft, ok bool) {
	n := name
	for _, p := range keyPrefixes {
		n = strings.TrimPrefix(n, p)
	}
	if rest, cut := strings.CutPrefix(n, kohyaPrefix); cut {
		n, f.kohya = rest, true
	}
	for _, s := range suffixes {
		if k, cut := strings.CutSuffix(n, s.s); cut && k != "" {
			f.peftDefault = f.peftDefault || strings.Contains(s.s, ".default.")
			return k, s.h, s.peft, true
		}
	}
	return "", 0, false, false
}

// diffusersNames reports whether any pair uses diffusers' module names.
func (f *File) diffusersNames() bool {
	for k := range f.pairs {
		k, renamed := diffusersPrefix(k)
		if _, _, ok := diffusersModule(k); ok || renamed {
			return true
		}
	}
	return false
}

// Close releases the file mapping; updates cannot be loaded afterwards.
func (f *File) Close() error { return f.src.Close() }

// keys lists the pair keys in order.
func (f *File) keys() []string {
	out := make([]string, 0, len(f.pairs))
	for k := range f.pairs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// read returns a stored tensor as float32.
func (f *File) read(t *weights.TensorInfo) ([]float32, error) {
	v, err := weights.Float32(f.src, t.Name)
	if err != nil {
		return nil, fmt.Errorf("lora: %s: %w", f.Path, err)
	}
	return v, nil
}
