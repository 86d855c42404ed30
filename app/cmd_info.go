package app

import (
	"context"
	"encoding/json"
	"io"

	"h3studio/engine/weights"
)

func init() {
	register(Command{
		Name:    "info",
		Summary: "describe a MiniMax-H3 snapshot: partitions, components, shards, QKV layout",
		Run:     runInfo,
	})
}

func runInfo(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("info", stderr)
	dir := fs.String("d", "", "snapshot folder (or a single .safetensors/.gguf file)")
	fs.StringVar(dir, "model", "", "same as -d")
	asJSON := fs.Bool("json", false, "print one JSON object (the format in ARCHITECTURE.md)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" || fs.NArg() > 0 {
		return &UsageError{Msg: "usage: h3studio info -d DIR [--json]"}
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
