package app

import (
	"runtime"
	"testing"
)

// The resident figure follows the process: touching 256 MB more raises
// it by about that much.
func TestResidentBytesFollowsAllocation(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("resident memory is read on Linux and macOS only")
	}
	before := residentBytes()
	if before <= 0 {
		t.Fatalf("resident memory %d", before)
	}
	const n = 256 << 20
	buf := make([]byte, n)
	for i := 0; i < n; i += 4096 {
		buf[i] = 1
	}
	after := residentBytes()
	runtime.KeepAlive(buf)
	t.Logf("resident %s before, %s after touching 256 MB", GBText(before), GBText(after))
	if grew := after - before; grew < n*9/10 || grew > n*2 {
		t.Fatalf("resident memory grew by %d bytes, want about %d", grew, n)
	}
}

func TestMemoryText(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		u       MemoryUse
		planned int64
		want    string
	}{
		{MemoryUse{Resident: 317 * mb}, 358 * mb, "0.31 GB of 0.35 GB planned"},
		{MemoryUse{Resident: 3 << 30, Device: 2 << 30}, 5 << 30, "3.0 GB of 5.0 GB planned · GPU 2.0 GB"},
		{MemoryUse{Device: 512 * mb}, 0, "0.50 GB in use"},
		{MemoryUse{}, 1 << 30, ""},
	} {
		if got := MemoryText(c.u, c.planned); got != c.want {
			t.Errorf("%+v of %d: %q, want %q", c.u, c.planned, got, c.want)
		}
	}
}
