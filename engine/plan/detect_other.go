//go:build !darwin

package plan

import (
	"bufio"
	"os"
	"strings"
)

func hostInfo() (mem int64, brand string, err error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	if mem, err = parseMeminfo(f); err != nil {
		return 0, "", err
	}
	return mem, cpuBrand(), nil
}

func cpuBrand() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown cpu"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown cpu"
}
