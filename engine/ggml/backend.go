package ggml

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// ErrNoCgo is returned (or panicked with) when the package was built
// without cgo and a call needs ggml.
var ErrNoCgo = errors.New("ggml: built without cgo; rebuild with CGO_ENABLED=1 and a C compiler")

// ErrNoDevice is returned by NewBackend when DeviceGPU is requested and no
// GPU device is registered: Metal is built in on Apple silicon; elsewhere a
// GPU backend library must be registered first (LoadBackend).
var ErrNoDevice = errors.New("ggml: no GPU device registered (Metal needs macOS on Apple silicon; CUDA needs " + CUDALibrary + " loaded)")

// Device selects where graphs run.
type Device int

const (
	// DeviceAuto uses the GPU (Metal, or CUDA once LoadBackend registered
	// it) when one is registered, else the CPU.
	DeviceAuto Device = iota
	// DeviceCPU runs everything on ggml's CPU backend.
	DeviceCPU
	// DeviceGPU requires a GPU; ops it does not support fall back to the CPU.
	DeviceGPU
)

// BackendOptions configures NewBackend. The zero value picks the GPU when
// present and uses one CPU thread per logical CPU.
type BackendOptions struct {
	Device  Device
	Threads int // CPU threads for ops run on the CPU; 0 means runtime.NumCPU()
	// TrackFallback records every node the scheduler places on the CPU
	// although there is a GPU (CPUNodes). It costs a cgo call per node of
	// every graph, so it is for tests: make mac-test fails a model graph
	// with any such node.
	TrackFallback bool
}

// Caps describes the primary device of a Backend.
type Caps struct {
	Name        string // ggml device name, e.g. "CPU", "Metal"
	Description string // e.g. the CPU model or "Apple M3 Max"
	GPU         bool   // graphs run on a GPU, with CPU fallback per op
	Unified     bool   // the GPU shares host memory (Apple silicon)
	MemoryFree  uint64 // bytes the device reports free
	MemoryTotal uint64 // bytes the device reports in total
	ZeroCopy    bool   // weights can be placed over host memory without a copy
}

// Backend is a set of ggml backends (GPU if any, plus the CPU) driven by one
// ggml scheduler. It runs one graph at a time; Compute calls from several
// goroutines are serialised.
type Backend struct {
	mu        sync.Mutex
	cpu, gpu  unsafe.Pointer // ggml_backend_t; gpu may be nil
	cpuDev    unsafe.Pointer
	gpuDev    unsafe.Pointer
	sched     unsafe.Pointer
	schedSize int
	gen       uint64 // bumped by every Compute; results of older graphs are stale
	caps      Caps
	splits    int
	track     bool
	cpuNodes  []Node
}

// NewBackend opens the CPU backend and, unless DeviceCPU is asked for, the
// first GPU device.
func NewBackend(o BackendOptions) (*Backend, error) {
	if !haveCgo {
		return nil, ErrNoCgo
	}
	b := &Backend{cpuDev: cDevByType(devCPU), track: o.TrackFallback}
	if b.cpuDev == nil {
		return nil, errors.New("ggml: no CPU device registered")
	}
	if o.Device != DeviceCPU {
		b.gpuDev = cDevByType(devGPU)
		if b.gpuDev == nil {
			b.gpuDev = cDevByType(devIGPU)
		}
		if b.gpuDev == nil && o.Device == DeviceGPU {
			return nil, ErrNoDevice
		}
	}
	if b.cpu = cDevInit(b.cpuDev); b.cpu == nil {
		return nil, errors.New("ggml: cannot initialise the CPU backend")
	}
	main := b.cpuDev
	if b.gpuDev != nil {
		if b.gpu = cDevInit(b.gpuDev); b.gpu == nil {
			cBackendFree(b.cpu)
			return nil, fmt.Errorf("ggml: cannot initialise GPU device %s", cDevProps(b.gpuDev).name)
		}
		main = b.gpuDev
	}
	p := cDevProps(main)
	b.caps = Caps{
		Name: p.name, Description: p.description, GPU: b.gpu != nil,
		Unified:    b.gpu != nil && (p.integrated || p.typ == devIGPU || runtime.GOOS == "darwin"),
		MemoryFree: p.memFree, MemoryTotal: p.memTotal, ZeroCopy: p.bufferFromHostPtr,
	}
	n := o.Threads
	if n <= 0 {
		n = runtime.NumCPU()
	}
	cSetThreads(b.cpu, n)
	return b, nil
}

// ReleaseScratch frees the compute buffers the scheduler keeps between
// graphs. ggml's allocator only ever grows them, so without this a phase
// inherits the largest graph of every phase before it: on the H200 the
// denoise phase's 1.6 GB (864x480x56; 8.3 GB at 1344x768x124) stayed
// allocated through the VAE decode, 1.2 GB over the plan. The next graph
// plans its own buffers again; results of the last graph become unreadable.
func (b *Backend) ReleaseScratch() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sched != nil {
		cSchedFree(b.sched)
		b.sched, b.schedSize = nil, 0
	}
	b.gen++
}

// ScratchBytes is the compute buffers the scheduler holds now, all devices.
func (b *Backend) ScratchBytes() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sched == nil {
		return 0
	}
	n := cSchedBufferSize(b.sched, b.cpu)
	if b.gpu != nil {
		n += cSchedBufferSize(b.sched, b.gpu)
	}
	return n
}

// Close releases the scheduler and backends. Graphs and weight sets made
// from b must not be used afterwards.
func (b *Backend) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sched != nil {
		cSchedFree(b.sched)
		b.sched = nil
	}
	if b.gpu != nil {
		cBackendFree(b.gpu)
		b.gpu = nil
	}
	if b.cpu != nil {
		cBackendFree(b.cpu)
		b.cpu = nil
	}
}

// Caps returns the primary device's description and memory.
func (b *Backend) Caps() Caps { return b.caps }

// SetThreads sets the CPU thread count (n <= 0 means runtime.NumCPU()).
func (b *Backend) SetThreads(n int) {
	if n <= 0 {
		n = runtime.NumCPU()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	cSetThreads(b.cpu, n)
}

// KVType is the K/V dtype attention should use on this backend. The CPU
// gets f32: its flash-attention kernel accumulates in fp16 when V is f16
// (error grows with the KV length), and with bf16 K/V it scores each key
// through a bf16 dot product and widens every value row, which on the
// AVX2 development machine ran at 10.4 GFLOP/s against f32's 18.0 for the
// demo model's attention (1,363 rows, 3 heads of 64; 14.7 against 21.6 at
// 2,048 rows of 8x128), so f32 is both exact and the fastest there. Metal
// accumulates f16 K/V in float but bf16 K/V in half, and CUDA's
// flash-attention kernels take no bf16 K/V at all (the op would fall back
// to the CPU), so a GPU gets f16.
func (b *Backend) KVType() DType {
	if b.gpu != nil {
		return F16
	}
	return F32
}

// Splits is the number of backend splits of the last computed graph: 1 means
// it ran on one device with no CPU fallback.
func (b *Backend) Splits() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.splits
}

// CPUNodes returns the nodes of every graph computed so far that the
// scheduler placed on the CPU although b has a GPU: ops the GPU backend
// does not support, or that it gave to the CPU for another reason. It is
// nil unless BackendOptions.TrackFallback was set. View ops (no kernel of
// their own) are left out.
func (b *Backend) CPUNodes() []Node {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Node(nil), b.cpuNodes...)
}

// recordFallback notes the nodes of gr the scheduler gave to the CPU; b.mu
// is held and gr was just computed.
func (b *Backend) recordFallback(gr unsafe.Pointer) {
	for _, h := range cGraphNodes(gr) {
		if cSchedTensorBackend(b.sched, h) != b.cpu {
			continue
		}
		switch n := cNode(h); n.Op {
		case "NONE", "VIEW", "RESHAPE", "PERMUTE", "TRANSPOSE":
		default:
			b.cpuNodes = append(b.cpuNodes, n)
		}
	}
}

// pin clears the scheduler's assignments (the previous graph's, or the
// reserve pass's) and, with a GPU, assigns it every kernel node it
// supports. ggml's own placement sends an op to the CPU when nothing ties it
// to the GPU: a graph without weights (attention masks built from host
// index vectors) and the ops next to such work ran on the H200's CPU, one
// of them into an assert in a CPU kernel. Ops the GPU cannot run still go
// to the CPU, where TrackFallback sees them; b.mu is held.
func (b *Backend) pin(gr unsafe.Pointer) {
	cSchedReset(b.sched)
	if b.gpu != nil {
		cSchedPinSupported(b.sched, gr, b.gpu, b.gpuDev)
	}
}

// ensureSched makes sure the scheduler can hold a graph of n nodes.
func (b *Backend) ensureSched(n int) {
	if b.sched != nil && b.schedSize >= n {
		return
	}
	if b.sched != nil {
		cSchedFree(b.sched)
	}
	bs := []unsafe.Pointer{b.cpu}
	if b.gpu != nil {
		bs = []unsafe.Pointer{b.gpu, b.cpu} // the CPU must be last: it takes inputs and fallbacks
	}
	b.sched = cSchedNew(bs, n)
	b.schedSize = n
}

// primary returns the backend and device weights are placed on.
func (b *Backend) primary() (be, dev unsafe.Pointer) {
	if b.gpu != nil {
		return b.gpu, b.gpuDev
	}
	return b.cpu, b.cpuDev
}

// DeviceMemory is the primary device's free and total memory now (Caps
// holds the values at NewBackend). On CUDA, ggml's memory pool keeps what a
// graph allocated, so total - free after a compute is close to the
// process's high-water mark on the device.
func (b *Backend) DeviceMemory() (free, total uint64) {
	_, dev := b.primary()
	p := cDevProps(dev)
	return p.memFree, p.memTotal
}
