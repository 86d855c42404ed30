// Command h3studio is H3 Studio: a desktop app that generates MiniMax-H3
// video with a synchronized stereo soundtrack on the user's own Mac.
//
// Started without arguments it opens the studio window; with a subcommand
// (render, plan, info, probe, tiny-model, convert, bench, ...) it runs the
// same application core headless. See `h3studio help`.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"

	"h3studio/app"
	_ "h3studio/locale" // before Fyne's lang init reads the locale: see the package doc
	"h3studio/ui"
)

func main() {
	// Settings from the environment are read here and nowhere else.
	app.SetMediaTools(os.Getenv("H3_FFMPEG"), os.Getenv("H3_FFPROBE"))
	// GPU backend libraries (`make cuda`) are registered before anything
	// opens a backend; H3_GGML_BACKEND names them when not beside the binary.
	exeDir := ""
	if exe, err := os.Executable(); err == nil {
		exeDir = filepath.Dir(exe)
	}
	app.LoadGPUBackends(os.Getenv("H3_GGML_BACKEND"), exeDir, os.Stderr)
	app.SetHub(os.Getenv("HF_ENDPOINT"), os.Getenv("HF_TOKEN"))
	// ggml prints its scheduler's splits and node backends under its own
	// GGML_SCHED_DEBUG at its debug level, which the ollama module's log
	// sink passes only when slog's default logger enables it.
	if os.Getenv("GGML_SCHED_DEBUG") != "" {
		slog.SetLogLoggerLevel(slog.LevelDebug)
	}
	if len(os.Args) < 2 || os.Args[1] == "gui" {
		os.Exit(runGUI(os.Args[min(len(os.Args), 2):]))
	}
	os.Exit(app.Main(os.Args[1:], os.Stdout, os.Stderr))
}

// runGUI opens the studio window. `h3studio gui --quit-after 3s` opens it
// and closes it again, which is how CI checks the window under Xvfb.
func runGUI(args []string) int {
	fs := flag.NewFlagSet("h3studio gui", flag.ContinueOnError)
	quitAfter := fs.Duration("quit-after", 0, "close the window after this long (smoke tests)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if noDisplay() {
		fmt.Fprintf(os.Stderr, "h3studio: no display found (DISPLAY and WAYLAND_DISPLAY are unset): open the window on a desktop, or render headless: %s render -p \"a red circle moves right on a navy background\" -o clip.mp4\n", filepath.Base(os.Args[0]))
		return 2
	}
	if err := ui.Run(ui.Options{QuitAfter: *quitAfter}); err != nil {
		fmt.Fprintln(os.Stderr, "h3studio:", err)
		return 1
	}
	return 0
}

// noDisplay reports a Linux or BSD session with neither X11 nor Wayland,
// where GLFW panics on the window's first cursor and would print a Go
// stack trace instead of a sentence.
func noDisplay() bool {
	switch runtime.GOOS {
	case "darwin", "windows":
		return false
	}
	return os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == ""
}
