package engine

// DeviceBytesInUse is the GPU memory the backend reports in use now: on
// Metal the device's currentAllocatedSize (ggml reports the working set
// left as free), on CUDA the device's used memory. It is 0 on the CPU,
// where ggml's numbers are the whole machine's, and after Close. Safe to
// call while Generate runs (the memory meter polls it).
func (e *Engine) DeviceBytesInUse() int64 {
	e.memMu.Lock()
	defer e.memMu.Unlock()
	if e.backend == nil || !e.gpu {
		return 0
	}
	free, total := e.backend.DeviceMemory()
	if total <= free {
		return 0
	}
	return int64(total - free)
}
