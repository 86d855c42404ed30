package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"h3studio/engine"
	"h3studio/engine/lora"
	"h3studio/engine/weights"
)

func init() {
	register(Command{
		Name:    "info",
		Summary: "describe a MiniMax-H3 snapshot: partitions, components, shards, QKV layout; or how a LoRA covers it",
		Run:     runInfo,
	})
}

func runInfo(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("info", stderr)
	dir := fs.String("d", "", "snapshot folder (or a single .safetensors/.gguf file)")
	fs.StringVar(dir, "model", "", "same as -d")
	asJSON := fs.Bool("json", false, "print one JSON object (the format in ARCHITECTURE.md)")
	loraFile := fs.String("lora", "", "instead, report how this LoRA file covers the snapshot's DiT")
	loraQKV := fs.String("lora-qkv", "", "with --lora: the LoRA's fused qkv row order, auto, flat or interleaved (default auto)")
	part := fs.String("partition", "", "with --lora: the partition to match, fl2va or ref2va (default fl2va when present)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return &UsageError{Msg: "usage: h3studio info -d DIR [--lora FILE] [--json]"}
	}
	if *loraFile != "" {
		return infoLoRA(stdout, *dir, *loraFile, *loraQKV, *part, *asJSON)
	}
	r, err := weights.Describe(*dir)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	return r.WriteText(stdout)
}

// loraReport is `info --lora --json`: the coverage, and why the adapter
// does not fit (empty when it does).
type loraReport struct {
	File      string `json:"file"`
	Partition string `json:"partition"`
	lora.Coverage
	Fits    bool   `json:"fits"`
	Refusal string `json:"refusal,omitempty"`
}

// infoLoRA prints how the adapter at path covers the snapshot's DiT; a
// file that does not fit still prints its coverage and exits 2.
func infoLoRA(w io.Writer, dir, path, qkv, part string, asJSON bool) error {
	cov, part, err := engine.InspectLoRA(dir, path, qkv, part)
	var misfit *lora.Misfit
	if err != nil && !errors.As(err, &misfit) || err != nil && cov.Layout == "" {
		return &exitError{ExitBadRequest, errors.New(TerminalAdvice(err))}
	}
	r := loraReport{File: path, Partition: part, Coverage: cov, Fits: err == nil}
	if err != nil {
		r.Refusal = TerminalAdvice(err)
	}
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if e := enc.Encode(r); e != nil {
			return e
		}
	} else if e := writeLoRAReport(w, r); e != nil {
		return e
	}
	if err != nil {
		return &exitError{ExitBadRequest, errors.New(r.Refusal)}
	}
	return nil
}

// writeLoRAReport is the text form of a LoRA's coverage.
func writeLoRAReport(w io.Writer, r loraReport) error {
	c := r.Coverage
	var b strings.Builder
	fmt.Fprintf(&b, "LoRA %s: %s layout, rank %d, %s of factors, on the %s DiT\n", r.File, c.Layout, c.Rank, GBText(c.Bytes), r.Partition)
	for _, k := range lora.Kinds {
		fmt.Fprintf(&b, "  %-18s %4d of %d modules", k, c.Modules[k], c.Targets[k])
		if c.Modules[k] > 0 {
			fmt.Fprintf(&b, ", alpha/rank %g", c.Scale[k])
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  alpha from %s\n", c.AlphaSource)
	if c.QKV != "" {
		fmt.Fprintf(&b, "  qkv rows read %s: %s\n", c.QKV, c.QKVReason)
	}
	if c.Partition != "" {
		fmt.Fprintf(&b, "  made for: %s\n", c.Partition)
	}
	for _, l := range []struct {
		what string
		keys []string
	}{{"unmatched", c.Unmatched}, {"unsupported modules", c.Unsupported}, {"extra tensors", c.Extra}, {"ignored", c.Ignored}} {
		if len(l.keys) > 0 {
			fmt.Fprintf(&b, "  %s: %d (%s)\n", l.what, len(l.keys), strings.Join(l.keys[:min(3, len(l.keys))], ", "))
		}
	}
	if r.Fits {
		b.WriteString("fits: every pair applies\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
