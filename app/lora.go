package app

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"h3studio/engine"
	"h3studio/engine/lora"
	"h3studio/engine/plan"
)

// LoRA is one low-rank adapter a request applies at run time. The window
// lists them (file, strength slider); the CLI takes --lora FILE[:STRENGTH].
type LoRA struct {
	Path string `json:"path"`
	// Strength scales the adapter's update (1: as trained; 0: off).
	Strength float64 `json:"strength"`
	// QKV is the row order of its fused qkv updates: "" (auto: decided
	// from the file, engine/lora qkv.go), flat or interleaved.
	QKV string `json:"qkv,omitempty"`
	// SHA256 is the file's digest, filled in when a render is prepared and
	// queued, so the clip's metadata and the history say which file it was.
	SHA256 string `json:"sha256,omitempty"`
}

// DefaultLoRAStrength is the strength of --lora FILE without one.
const DefaultLoRAStrength = 1.0

// MaxLoRAStrength bounds |strength|: adapters are trained for 1, and
// ComfyUI's node lets people push to a few times that; beyond it the
// update swamps the model.
const MaxLoRAStrength = 10.0

// loraList is the repeatable --lora FILE[:STRENGTH] flag.
type loraList struct{ ls *[]LoRA }

func (l loraList) String() string { return "" }

// Set reads FILE[:STRENGTH][:flat|interleaved]; a suffix after the last
// colon that is neither a number nor a layout belongs to the file name.
func (l loraList) Set(v string) error {
	x := LoRA{Path: v, Strength: DefaultLoRAStrength}
	if i := strings.LastIndex(x.Path, ":"); i > 0 {
		if q := lora.QKVChoice(x.Path[i+1:]); q == lora.QKVFlat || q == lora.QKVInterleaved {
			x.Path, x.QKV = x.Path[:i], string(q)
		}
	}
	if i := strings.LastIndex(x.Path, ":"); i > 0 {
		if s, err := strconv.ParseFloat(x.Path[i+1:], 64); err == nil {
			x.Path, x.Strength = x.Path[:i], s
		}
	}
	*l.ls = append(*l.ls, x)
	return nil
}

// validateLoRAs reports the adapters' own problems.
func (r Request) validateLoRAs() []error {
	var errs []error
	for _, l := range r.LoRAs {
		if l.Path == "" {
			errs = append(errs, &FlagError{Msg: "a LoRA needs a file", Flag: "--lora"})
		}
		if math.IsNaN(l.Strength) || math.Abs(l.Strength) > MaxLoRAStrength {
			errs = append(errs, &FlagError{Msg: fmt.Sprintf("the LoRA strength %g of %s is outside -%g..%g", l.Strength, l.Path, MaxLoRAStrength, MaxLoRAStrength), Flag: "--lora"})
		}
		if _, err := lora.ParseQKVChoice(l.QKV); err != nil {
			errs = append(errs, &FlagError{Msg: fmt.Sprintf("the qkv row order %q of %s is not auto, flat or interleaved", l.QKV, l.Path), Flag: "--lora"})
		}
	}
	return errs
}

// planLoRAs is the request's adapters as the planner carries them; a file
// that cannot be read is a *FileError.
func planLoRAs(r Request) ([]plan.LoRA, error) {
	var out []plan.LoRA
	for _, l := range r.LoRAs {
		if _, err := os.Stat(l.Path); err != nil {
			return nil, &FileError{l.Path, err}
		}
		out = append(out, plan.LoRA{Path: l.Path, Strength: l.Strength, QKV: l.QKV})
	}
	return out, nil
}

// digests caches file digests by (path, size, mtime): hashing a 780 MB
// Turbo adapter takes seconds, and a job is prepared more than once.
var digests fileCache[probeKey, string]

// withLoRADigests returns r with every adapter's SHA256 filled in.
func withLoRADigests(r Request) (Request, error) {
	if len(r.LoRAs) == 0 {
		return r, nil
	}
	ls := append([]LoRA(nil), r.LoRAs...)
	for i := range ls {
		d, err := fileDigest(ls[i].Path)
		if err != nil {
			return r, &FileError{ls[i].Path, err}
		}
		ls[i].SHA256 = d
	}
	r.LoRAs = ls
	return r, nil
}

// LoRADigest is the hex SHA-256 of an adapter file as requests record it
// (cached by path, size and modification time): the window compares a
// restored request's digest with the file's.
func LoRADigest(path string) (string, error) { return fileDigest(path) }

// fileDigest is the hex SHA-256 of a file, cached.
func fileDigest(path string) (string, error) {
	key, err := fileKey(path)
	if err != nil {
		return "", err
	}
	if d, ok := digests.get(key); ok {
		return d, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	d := hex.EncodeToString(h.Sum(nil))
	digests.put(key, d)
	return d, nil
}

// InspectLoRA checks the adapter at path against the DiT of model (a
// snapshot folder or built-in model; "" the default) before the window lists it:
// the coverage when it fits, else the error whose Advice is the sentence
// the CLI prints. It reads headers only. An adapter made for the other
// partition than the default one (a Ref2VA Turbo) is checked against the
// partition it names, since the task decides which one a render uses and
// the plan refuses a mismatch then.
func (rd *Renderer) InspectLoRA(model, path string) (lora.Coverage, error) {
	dir, err := rd.modelDir(model)
	if err != nil {
		return lora.Coverage{}, err
	}
	cov, _, err := engine.InspectLoRA(dir, path, "", "")
	var misfit *lora.Misfit
	if errors.As(err, &misfit) && misfit.Kind == lora.Partition && cov.Partition != "" {
		if c, _, e := engine.InspectLoRA(dir, path, "", cov.Partition); e == nil {
			return c, nil
		}
	}
	return cov, err
}

// LoRACoverage is InspectLoRA's coverage as LoRACoverageText says it,
// for the window's LoRA list.
func (rd *Renderer) LoRACoverage(model, path string) (string, error) {
	cov, err := rd.InspectLoRA(model, path)
	if err != nil {
		return "", err
	}
	return LoRACoverageText(cov), nil
}

// LoRACoverageText is an adapter's coverage in one line, for its row in
// the window: "259 modules · rank 64".
func LoRACoverageText(c lora.Coverage) string {
	n := 0
	for _, k := range lora.Kinds {
		n += c.Modules[k]
	}
	unit := "modules"
	if n == 1 {
		unit = "module"
	}
	return fmt.Sprintf("%d %s · rank %d", n, unit, c.Rank)
}

// BadLoRAStrengthText is the window's sentence for a strength field that
// holds no number in range.
func BadLoRAStrengthText(name string) string {
	return fmt.Sprintf("the strength of the LoRA %s must be a number from -%g to %g, such as 1 or 0.8", name, MaxLoRAStrength, MaxLoRAStrength)
}
