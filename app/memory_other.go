//go:build !linux && !(darwin && cgo)

package app

// residentBytes is unknown here: the meter shows the GPU's share alone.
func residentBytes() int64 { return 0 }
