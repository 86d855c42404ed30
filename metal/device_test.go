package metal

import (
	"errors"
	"runtime"
	"testing"
)

// TestDetect: off macOS there is no device and the error says so; on a Mac
// the device must report plausible capabilities.
func TestDetect(t *testing.T) {
	d, err := Detect()
	if runtime.GOOS != "darwin" {
		if !errors.Is(err, ErrNoDevice) {
			t.Fatalf("Detect on %s: %v, want ErrNoDevice", runtime.GOOS, err)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v", d)
	if d.Name == "" || d.RecommendedWorkingSet == 0 || d.MaxThreadgroupMemory < 16<<10 || d.Family < 7 {
		t.Errorf("implausible device %+v", d)
	}
}
