package app

import (
	"context"
	"fmt"
	"io"

	"h3studio/engine/weights"
)

func init() {
	register(Command{
		Name:    "tiny-model",
		Summary: "write a tiny random-weight MiniMax-H3 snapshot (official layout and names)",
		Run:     runTinyModel,
	})
}

func runTinyModel(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("tiny-model", stderr)
	out := fs.String("out", "", "folder to create (must not exist or be empty)")
	seed := fs.Uint64("seed", 1, "random seed; the same seed writes the same bytes")
	aligned := fs.Bool("aligned16", false, "start shard data sections on 16 bytes (the release uses 8 mod 16)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" || fs.NArg() > 0 {
		return &UsageError{Msg: "usage: h3studio tiny-model --out DIR [--seed N] [--aligned16]"}
	}
	if err := weights.WriteTiny(*out, weights.TinyOptions{Seed: *seed, Aligned16: *aligned}); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "wrote tiny MiniMax-H3 snapshot (seed %d) to %s\n", *seed, *out)
	return err
}
