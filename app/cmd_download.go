package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"h3studio/app/download"
	"h3studio/engine/weights"
)

func init() {
	register(Command{
		Name:    "download",
		Summary: "fetch a MiniMax-H3 snapshot from the hub (resumable, verified), then check it like info",
		Run:     runDownload,
	})
}

// DefaultRepo is the official MiniMax-H3 repository.
const DefaultRepo = "MiniMaxAI/MiniMax-H3"

var hubEndpoint, hubToken string

// SetHub names the hub and the token downloads use when a request names
// none. main reads them from HF_ENDPOINT and HF_TOKEN, the variables the
// hub's own clients read, and calls this before any command or window.
func SetHub(endpoint, token string) {
	hubEndpoint, hubToken = endpoint, token
}

// DownloadRequest is one download: a repository (or one partition of it)
// into a folder.
type DownloadRequest struct {
	Repo string
	Dir  string
	// Endpoint overrides SetHub's hub ("": that one, or the public hub).
	Endpoint  string
	Revision  string // "": main
	Partition string // "", fl2va or ref2va
	Logger    *slog.Logger
}

// DownloadEvents receives a download's progress. Both fields may be nil;
// they are called from one goroutine at a time.
type DownloadEvents struct {
	// Planned is called once the file list is measured against the folder
	// and the disk, before any file transfer begins.
	Planned func(*download.Plan)
	// Progress is called a few times a second and once at the end.
	Progress func(download.Progress)
}

// Download fetches the snapshot and validates the finished folder the way
// `h3studio info` does; the CLI and the window's Settings both run it.
func Download(ctx context.Context, req DownloadRequest, ev DownloadEvents) (*weights.Report, download.Result, error) {
	endpoint := req.Endpoint
	if endpoint == "" {
		endpoint = hubEndpoint
	}
	c, err := download.New(download.Options{Endpoint: endpoint, Token: hubToken, UserAgent: "h3studio/" + Version, Logger: req.Logger})
	if err != nil {
		return nil, download.Result{}, err
	}
	snap, err := c.List(ctx, req.Repo, req.Revision, req.Partition)
	if err != nil {
		return nil, download.Result{}, err
	}
	p, err := download.Prepare(snap, req.Dir)
	if err != nil {
		return nil, download.Result{}, err
	}
	if ev.Planned != nil {
		ev.Planned(p)
	}
	res, err := c.Fetch(ctx, p, ev.Progress)
	if errors.Is(err, context.Canceled) {
		return nil, res, errors.New("download: interrupted; run it again to resume where it stopped")
	}
	if err != nil {
		return nil, res, err
	}
	rep, err := weights.Describe(req.Dir)
	if err != nil {
		return nil, res, fmt.Errorf("download: every file arrived and verified, but the folder is not a snapshot H3 Studio can use: %w", err)
	}
	return rep, res, nil
}

func runDownload(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("download", stderr)
	var req DownloadRequest
	fs.StringVar(&req.Endpoint, "endpoint", "", "hub base URL (default: HF_ENDPOINT, else "+download.DefaultEndpoint+")")
	fs.StringVar(&req.Revision, "revision", "main", "branch, tag or commit")
	fs.StringVar(&req.Partition, "partition", "", "fetch one partition (fl2va or ref2va) and the root files")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: h3studio download [--endpoint URL] [--revision REV] [--partition fl2va|ref2va] REPO DIR")
		fmt.Fprintf(stderr, "REPO is %s for the official snapshot. HF_TOKEN is sent to the hub for gated repositories.\n", DefaultRepo)
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return &UsageError{Msg: "usage: h3studio download [--endpoint URL] [--revision REV] [--partition fl2va|ref2va] REPO DIR (for example " + DefaultRepo + " ~/models/MiniMax-H3)"}
	}
	req.Repo, req.Dir = pos[0], pos[1]
	req.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	bar := newProgressPrinter(stderr)
	rep, res, err := Download(ctx, req, DownloadEvents{
		Planned: func(p *download.Plan) {
			fmt.Fprintf(stdout, "%s at %s (commit %.12s): %d files, %s\n", p.Repo, p.Revision, p.Commit, len(p.Files), download.Bytes(p.Size()))
			here := fmt.Sprintf("%d already here", len(p.Complete))
			if n := len(p.Unverified); n > 0 {
				here += fmt.Sprintf(", %d here but unrecorded (verified first)", n)
			}
			fmt.Fprintf(stdout, "%s; %s to fetch into %s (%s)\n", here, download.Bytes(p.Need), p.Dir, FreeText(p.Free))
		},
		Progress: bar.print,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "done: %d files fetched, %d verified and kept, %d already complete; %s in %s (%s/s)\n\n", res.Fetched, res.Kept, res.Skipped, download.Bytes(res.Moved), res.Elapsed.Round(time.Second), download.Bytes(int64(res.Rate)))
	return rep.WriteText(stdout)
}

// parseInterleaved lets flags come before, between or after the
// positional arguments, which the flag package alone does not.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// FreeText words a download.Plan's free space: "75.8 GB free".
func FreeText(n int64) string {
	if n < 0 {
		return "free space unknown"
	}
	return download.Bytes(n) + " free"
}

// progressPrinter draws a bar that rewrites itself on a terminal, and
// otherwise writes a plain line every tenth of the way or half minute.
type progressPrinter struct {
	w        io.Writer
	terminal bool
	lastLine time.Time
	lastTen  int64
}

func newProgressPrinter(w io.Writer) *progressPrinter {
	pp := &progressPrinter{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			pp.terminal = true
		}
	}
	return pp
}

func (pp *progressPrinter) print(p download.Progress) {
	line := DownloadStatus(p)
	if pp.terminal {
		const width = 30
		filled := 0
		if p.Total > 0 {
			filled = int(width * p.Done / p.Total)
		}
		fmt.Fprintf(pp.w, "\r[%s%s] %s\x1b[K", strings.Repeat("=", filled), strings.Repeat(" ", width-filled), line)
		if p.Final {
			fmt.Fprintln(pp.w)
		}
		return
	}
	var tenth int64
	if p.Total > 0 {
		tenth = 10 * p.Done / p.Total
	}
	if p.Final || tenth > pp.lastTen || time.Since(pp.lastLine) >= 30*time.Second {
		fmt.Fprintln(pp.w, line)
		pp.lastLine, pp.lastTen = time.Now(), tenth
	}
}

// DownloadStatus is one line of download progress, the same in the
// terminal and the window: "12.3 GB of 134.2 GB (9%), 3 of 62 files,
// 85.2 MB/s, 24m10s left".
func DownloadStatus(p download.Progress) string {
	pct := 100.0
	if p.Total > 0 {
		pct = 100 * float64(p.Done) / float64(p.Total)
	}
	s := fmt.Sprintf("%s of %s (%.0f%%), %d of %d files", download.Bytes(p.Done), download.Bytes(p.Total), pct, p.FilesDone, p.Files)
	if !p.Final && p.Rate > 0 {
		s += fmt.Sprintf(", %s/s", download.Bytes(int64(p.Rate)))
	}
	if p.ETA > 0 {
		s += ", " + p.ETA.Round(time.Second).String() + " left"
	}
	return s
}
