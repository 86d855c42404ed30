//go:build darwin

package plan

import "golang.org/x/sys/unix"

func hostInfo() (mem int64, brand string, err error) {
	m, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return 0, "", err
	}
	brand, err = unix.Sysctl("machdep.cpu.brand_string")
	if err != nil {
		return 0, "", err
	}
	return int64(m), brand, nil
}
