//go:build !linux

package app

// lowerThreadPriority leaves the priority as it is: on a Mac the render's
// compute is on the GPU, and the CPU threads that wait for it do not
// crowd the window.
func lowerThreadPriority(int) {}
