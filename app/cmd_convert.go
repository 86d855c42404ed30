package app

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"h3studio/engine/ggml"
	"h3studio/engine/weights"
)

func init() {
	register(Command{
		Name:    "convert",
		Summary: "quantize a snapshot's DiT and text encoder to q8_0 or q4_k (atomic output)",
		Run:     runConvert,
	})
}

func runConvert(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("convert", stderr)
	dir := fs.String("d", "", "official-layout snapshot folder to read")
	fs.StringVar(dir, "model", "", "same as -d")
	to := fs.String("to", "", "weight type: q8_0 or q4_k")
	out := fs.String("o", "", "output folder to create (must not exist or be empty)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" || *out == "" || *to == "" || fs.NArg() > 0 {
		return &UsageError{Msg: "usage: h3studio convert -d SNAPSHOT --to q8_0|q4_k -o DIR"}
	}
	var dt ggml.DType
	switch strings.ToLower(*to) {
	case "q8_0":
		dt = ggml.Q8_0
	case "q4_k":
		dt = ggml.Q4_K
	default:
		return &UsageError{Msg: fmt.Sprintf("--to %s is not supported; choose q8_0 or q4_k", *to)}
	}
	var last time.Time
	lastPct := -1
	err := weights.Convert(*dir, *out, weights.ConvertOptions{To: dt, Progress: func(done, total int64, what string) {
		pct := 100
		if total > 0 {
			pct = int(done * 100 / total)
		}
		// Progress goes to stderr at most every 200 ms, so scripts can
		// keep stdout for the result line.
		if pct != lastPct && (time.Since(last) > 200*time.Millisecond || pct == 100) {
			fmt.Fprintf(stderr, "converting: %3d%%  %s\n", pct, what)
			last, lastPct = time.Now(), pct
		}
	}})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s snapshot to %s\n", strings.ToLower(*to), *out)
	return err
}
