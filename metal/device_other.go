//go:build !darwin || !cgo

package metal

// Detect reports ErrNoDevice: there is no Metal outside macOS, and a build
// without cgo cannot reach it.
func Detect() (Device, error) { return Device{}, ErrNoDevice }
