// Command download-bench (make bench) measures the download core on a
// 1 GiB LFS file served over loopback by hubtest (the hub redirecting to
// its storage listener), against curl fetching the same URL from the same
// server in the same run, alternating. The download verifies SHA-256 as it
// goes and fsyncs before the rename; curl does neither, so the table also
// times curl followed by sha256sum, the same work done by two tools.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"time"

	"h3studio/app/download"
	"h3studio/app/download/hubtest"
)

const repo = "bench/one-gib"

func main() {
	size := flag.Int64("size", 1<<30, "file size in bytes")
	rounds := flag.Int("rounds", 5, "alternating rounds of each client")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	flag.Parse()
	if err := profiled(*prof, func() error { return run(*size, *rounds) }); err != nil {
		fmt.Fprintln(os.Stderr, "download-bench:", err)
		os.Exit(1)
	}
}

func profiled(path string, f func() error) error {
	if path == "" {
		return f()
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		return err
	}
	err = f()
	pprof.StopCPUProfile()
	return errors.Join(err, out.Close())
}

func run(size int64, rounds int) error {
	curl, err := exec.LookPath("curl")
	if err != nil {
		return fmt.Errorf("curl is needed as the reference (make deps installs it): %w", err)
	}
	work, err := os.MkdirTemp("", "download-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	src := filepath.Join(work, "src")
	if err := writeRandom(filepath.Join(src, "model.safetensors"), size); err != nil {
		return err
	}
	hub, err := hubtest.New(repo, src)
	if err != nil {
		return err
	}
	defer hub.Close()
	url := hub.Hub.URL + "/" + repo + "/resolve/main/model.safetensors"
	hasher, err := sha256Command()
	if err != nil {
		return err
	}
	var ours, theirs, verified []float64
	for i := range rounds {
		dst := filepath.Join(work, fmt.Sprintf("dst%d", i))
		r, err := fetch(hub.Hub.URL, dst)
		if err != nil {
			return err
		}
		ours = append(ours, r)
		if err := os.RemoveAll(dst); err != nil {
			return err
		}
		out := filepath.Join(work, "curl.out")
		start := time.Now()
		if b, err := exec.Command(curl, "-sS", "-f", "-L", "-o", out, url).CombinedOutput(); err != nil {
			return fmt.Errorf("curl: %v: %s", err, b)
		}
		theirs = append(theirs, float64(size)/time.Since(start).Seconds())
		if b, err := exec.Command(hasher[0], append(hasher[1:], out)...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v: %s", hasher[0], err, b)
		}
		verified = append(verified, float64(size)/time.Since(start).Seconds())
		if err := os.Remove(out); err != nil {
			return err
		}
	}
	fmt.Printf("download of a %s LFS file over loopback (redirect to a second listener), %d alternating rounds, median:\n", download.Bytes(size), rounds)
	fmt.Printf("  h3studio download  %8.1f MB/s  (SHA-256 verified, fsync, rename)\n", median(ours)/1e6)
	fmt.Printf("  curl -L -o         %8.1f MB/s  (no verification)       ratio %.2f\n", median(theirs)/1e6, median(ours)/median(theirs))
	fmt.Printf("  curl + %-11s %8.1f MB/s  (the same file hashed after) ratio %.2f\n", hasher[0], median(verified)/1e6, median(ours)/median(verified))
	return nil
}

// sha256Command is the system's SHA-256 tool: sha256sum on Linux,
// shasum on a Mac.
func sha256Command() ([]string, error) {
	if _, err := exec.LookPath("sha256sum"); err == nil {
		return []string{"sha256sum"}, nil
	}
	if _, err := exec.LookPath("shasum"); err == nil {
		return []string{"shasum", "-a", "256"}, nil
	}
	return nil, fmt.Errorf("neither sha256sum nor shasum is installed")
}

// fetch downloads the repository into dst and returns the rate in bytes/s.
func fetch(endpoint, dst string) (float64, error) {
	c, err := download.New(download.Options{Endpoint: endpoint})
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	start := time.Now()
	s, err := c.List(ctx, repo, "", "")
	if err != nil {
		return 0, err
	}
	p, err := download.Prepare(s, dst)
	if err != nil {
		return 0, err
	}
	if _, err := c.Fetch(ctx, p, nil); err != nil {
		return 0, err
	}
	return float64(s.Size()) / time.Since(start).Seconds(), nil
}

func writeRandom(path string, size int64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	rng := rand.NewChaCha8([32]byte{1})
	buf := make([]byte, 4<<20)
	for left := size; left > 0; left -= int64(len(buf)) {
		b := buf[:min(int64(len(buf)), left)]
		rng.Read(b)
		if _, err := f.Write(b); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}
