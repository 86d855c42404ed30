package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrTimeout reports that an FFmpeg child ran past its wall-clock limit and
// was killed.
var ErrTimeout = errors.New("timed out")

// stderrKeep bounds how much of a child's stderr is kept for its error.
const stderrKeep = 8 << 10

// proc is one FFmpeg or FFprobe child in its own process group.
type proc struct {
	cmd     *exec.Cmd
	name    string // binary base name, for messages
	parent  context.Context
	ctx     context.Context // parent plus the wall-clock limit
	cancel  context.CancelFunc
	timeout time.Duration
	stderr  *tailBuffer
	// strict fails a child that exits 0 but printed errors: FFmpeg decodes
	// a truncated file as far as it can, reports "partial file" at -v
	// error, and succeeds, which would silently shorten a reference.
	strict bool
}

// newProc prepares a child. Callers attach pipes to p.cmd, then call start
// and wait. The child is put in its own process group so that a cancel or
// timeout kills it and anything it spawned, and it gets no stdin unless the
// caller attaches one.
func (t *Tools) newProc(ctx context.Context, bin string, timeout time.Duration, args ...string) *proc {
	pctx, cancel := context.WithTimeout(ctx, timeout)
	cmd := exec.CommandContext(pctx, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p := &proc{cmd: cmd, name: filepath.Base(bin), parent: ctx, ctx: pctx, cancel: cancel,
		timeout: timeout, stderr: &tailBuffer{max: stderrKeep}}
	cmd.Cancel = p.killGroup
	// Pipes to a killed child must not keep Wait blocked forever.
	cmd.WaitDelay = 5 * time.Second
	cmd.Stderr = p.stderr
	return p
}

func (p *proc) killGroup() error {
	if p.cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

func (p *proc) start() error {
	if err := p.cmd.Start(); err != nil {
		p.cancel()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	return nil
}

// wait reaps the child and turns its outcome into one error line: the
// cancellation, the timeout, or the last lines FFmpeg printed. Like all
// proc errors it names the binary but not the package or the operation;
// callers wrap it as "media: <op> <path>: ...".
func (p *proc) wait() error {
	err := p.cmd.Wait()
	// A child that forked (none of ours should) must not outlive us.
	_ = p.killGroup()
	defer p.cancel()
	if perr := p.parent.Err(); perr != nil {
		return fmt.Errorf("%s canceled: %w", p.name, perr)
	}
	if errors.Is(p.ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%s %w after %s and was killed", p.name, ErrTimeout, p.timeout)
	}
	msg := p.stderr.oneLine()
	if err != nil {
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("%s: %s", p.name, msg)
	}
	if p.strict && msg != "" {
		return fmt.Errorf("%s: the file is damaged or truncated (%s)", p.name, msg)
	}
	return nil
}

// abort kills the child and reaps it, ignoring how it ended.
func (p *proc) abort() {
	_ = p.killGroup()
	_ = p.cmd.Wait()
	p.cancel()
}

// output runs a child to completion and returns its stdout.
func (t *Tools) output(ctx context.Context, bin string, timeout time.Duration, args ...string) ([]byte, error) {
	p := t.newProc(ctx, bin, timeout, args...)
	var out bytes.Buffer
	p.cmd.Stdout = &out
	t.logger().Debug("media: run", "bin", p.name, "args", strings.Join(args, " "))
	if err := p.start(); err != nil {
		return nil, err
	}
	if err := p.wait(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// oneLine returns the last few non-empty stderr lines joined with "; ".
func (b *tailBuffer) oneLine() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var lines []string
	for _, l := range strings.Split(string(b.buf), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	msg := strings.Join(lines, "; ")
	// "[mov,mp4,... @ 0x55d0c0] moov atom not found": the address is noise.
	msg = ffmpegContext.ReplaceAllString(msg, "[$1] ")
	msg = strings.ReplaceAll(msg, "file:", "")
	return oneLine(msg)
}

var ffmpegContext = regexp.MustCompile(`\[([^\]@]*?) @ 0x[0-9a-f]+\] ?`)

// oneLine collapses whitespace and caps the length of a message.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	const maxLen = 400
	if len(s) > maxLen {
		s = s[:maxLen] + "..."
	}
	return s
}
