package weights

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// MemStat is the process's resident memory split as the kernel accounts
// it: anonymous (heap, backend buffers) and file-backed (mapped weights),
// and the peak resident set so far (VmHWM; 0 where not reported).
type MemStat struct {
	RSSAnon, RSSFile int64
	PeakRSS          int64
}

// ReadMemStat reads /proc/self/status. ok is false where the kernel does
// not provide the split (not Linux).
func ReadMemStat() (m MemStat, ok bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return m, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	found := 0
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		var dst *int64
		switch k {
		case "RssAnon":
			dst, found = &m.RSSAnon, found+1
		case "RssFile":
			dst, found = &m.RSSFile, found+1
		case "VmHWM":
			dst = &m.PeakRSS
		default:
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return m, false
		}
		*dst = kb << 10
	}
	return m, found == 2
}
