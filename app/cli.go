// Package app is H3 Studio's headless core: requests, presets, the job
// queue, history, settings and the command-line interface. The Fyne UI and
// the CLI both drive it; it never imports Fyne.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
)

// Command is one `h3studio <name>` subcommand.
type Command struct {
	Name    string
	Summary string // one line for `h3studio help`
	// Run executes the command. Errors are printed as one line by Main;
	// a *UsageError also prints the command's usage.
	Run func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// UsageError marks a mistake in the command line itself.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

var commands = map[string]Command{}

// register adds a subcommand; each command lives in its own file and
// registers itself from init so that files can be added without touching
// a central table.
func register(c Command) {
	if _, dup := commands[c.Name]; dup {
		panic("app: command registered twice: " + c.Name)
	}
	commands[c.Name] = c
}

// Commands lists the registered subcommands sorted by name.
func Commands() []Command {
	out := make([]Command, 0, len(commands))
	for _, c := range commands {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Main runs one subcommand and returns the process exit status: 0 on
// success, 1 when the command failed, 2 for a bad command line, or the
// status an error with an ExitCode method carries (render's 3 and 4).
func Main(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printHelp(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "h3studio: unknown command %q; run 'h3studio help' for the list\n", args[0])
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err := c.Run(ctx, args[1:], stdout, stderr)
	var usage *UsageError
	var coded interface{ ExitCode() int } // a command's own exit status (render's 3 and 4)
	var req *RequestError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "h3studio %s: %s\n", c.Name, usage.Msg)
		return 2
	case errors.As(err, &coded):
		fmt.Fprintf(stderr, "h3studio %s: %s\n", c.Name, oneLine(TerminalAdvice(err)))
		return coded.ExitCode()
	case errors.As(err, &req):
		// A request that cannot be served as given is a bad command line,
		// whichever command was given it.
		fmt.Fprintf(stderr, "h3studio %s: %s\n", c.Name, oneLine(TerminalAdvice(err)))
		return 2
	default:
		fmt.Fprintf(stderr, "h3studio %s: %s\n", c.Name, oneLine(TerminalAdvice(err)))
		return 1
	}
}

// newFlags returns a flag set whose parse errors come back as *UsageError
// instead of exiting the process.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("h3studio "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args and wraps failures as usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &UsageError{Msg: err.Error()}
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "H3 Studio: MiniMax-H3 video with sound, on your Mac.")
	fmt.Fprintln(w, "")
	fmt.Fprintln(w, "usage: h3studio             open the studio window")
	fmt.Fprintln(w, "       h3studio COMMAND [flags]")
	fmt.Fprintln(w, "")
	fmt.Fprintln(w, "commands:")
	for _, c := range Commands() {
		fmt.Fprintf(w, "  %-12s %s\n", c.Name, c.Summary)
	}
}
