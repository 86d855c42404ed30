package app

import (
	"context"
	"fmt"
	"io"
	"runtime"
)

// Version is the application version shown by `h3studio version` and the
// About box; FyneApp.toml carries the same number for bundles.
const Version = "0.1.0"

func init() {
	register(Command{
		Name:    "version",
		Summary: "print the version and build platform",
		Run: func(_ context.Context, _ []string, stdout, _ io.Writer) error {
			_, err := fmt.Fprintf(stdout, "h3studio %s (%s/%s, %s)\n", Version, runtime.GOOS, runtime.GOARCH, runtime.Version())
			return err
		},
	})
}
