package app

import (
	"fmt"
	"path/filepath"
	"time"
)

// OutputPath names the clip the window renders for a request with this
// seed, asked for at t: one new file per render in dir (never overwriting
// an earlier clip, to the millisecond), named so the folder sorts by time
// and says which seed to reuse.
func OutputPath(dir string, seed int64, t time.Time) string {
	return filepath.Join(dir, fmt.Sprintf("h3studio-%s-seed%d.mp4", t.Format("20060102-150405.000"), seed))
}
