package app

// MemoryUse is the process's memory at one moment, for the meter beside a
// render's progress.
type MemoryUse struct {
	// Resident is the process's resident memory in bytes (0 where the OS
	// does not say).
	Resident int64
	// Device is the GPU memory the backends report in use (the Metal
	// working set on a Mac); 0 on the CPU.
	Device int64
}

// MemoryNow reads the process's resident memory and the device memory of
// the renderer's open engines. It takes a few microseconds and is safe
// while renders run; the window polls it a few times a second.
func (rd *Renderer) MemoryNow() MemoryUse {
	u := MemoryUse{Resident: residentBytes()}
	rd.mu.Lock()
	defer rd.mu.Unlock()
	for _, e := range rd.engines {
		u.Device = max(u.Device, e.DeviceBytesInUse())
	}
	return u
}
