package ggml

import (
	"fmt"
	"os"
	"runtime"
	"unsafe"
)

// WeightSet holds tensors that outlive graphs (model weights, constant
// tables) in persistent backend buffers: device memory via Alloc, or placed
// over existing host memory via AllocHost. A model loads its weights once and
// uses them in many graphs of the same Backend.
type WeightSet struct {
	b        *Backend
	ctx      unsafe.Pointer
	tensors  []*Tensor
	byName   map[string]*Tensor
	buf      unsafe.Pointer
	readOnly bool // placed over caller memory
	freed    bool
	cleanup  runtime.Cleanup
	bufs     *wsBuffers // what the cleanup frees
}

// wsBuffers is what a forgotten WeightSet's cleanup releases.
type wsBuffers struct{ ctx, buf unsafe.Pointer }

func freeWeights(r *wsBuffers) {
	if r.buf != nil {
		cBufferFree(r.buf)
	}
	cFree(r.ctx)
}

// NewWeightSet starts an empty set with room for maxTensors tensors.
func (b *Backend) NewWeightSet(maxTensors int) *WeightSet {
	if maxTensors <= 0 {
		panicf("NewWeightSet: maxTensors must be positive, got %d", maxTensors)
	}
	ctx := cInit(maxTensors * cTensorOverhead())
	if ctx == nil {
		panicf("NewWeightSet: cannot allocate a context for %d tensors", maxTensors)
	}
	ws := &WeightSet{b: b, ctx: ctx, byName: map[string]*Tensor{}, bufs: &wsBuffers{ctx: ctx}}
	ws.cleanup = runtime.AddCleanup(ws, freeWeights, ws.bufs)
	return ws
}

// Add declares a weight (before Alloc/AllocHost). Names must be unique.
func (ws *WeightSet) Add(name string, dt DType, shape ...int) *Tensor {
	if ws.freed || ws.buf != nil {
		panicf("WeightSet.Add %q: set already allocated or freed", name)
	}
	if _, dup := ws.byName[name]; dup {
		panicf("WeightSet.Add: duplicate name %q", name)
	}
	ne, dims := checkShape("WeightSet.Add "+name, dt, shape)
	t := wrapTensor(cNewTensor(ws.ctx, dt, ne, dims), nil, ws)
	t.SetName("%s", ggmlName(name))
	ws.tensors = append(ws.tensors, t)
	ws.byName[name] = t
	return t
}

// ggmlName is the name ggml keeps for a weight: the whole name when it
// fits ggml's 63 bytes, else its last 63 (a derived weight's checkpoint
// name and transform, e.g. the audio decoder's resampling matrices, can
// be longer; the tail is the part that tells weights apart). Get still
// finds it by its whole name.
func ggmlName(name string) string {
	const most = 63
	if len(name) <= most {
		return name
	}
	return name[len(name)-most:]
}

// Get returns the weight with the given name, or nil.
func (ws *WeightSet) Get(name string) *Tensor { return ws.byName[name] }

// Tensors returns the weights in the order they were added.
func (ws *WeightSet) Tensors() []*Tensor { return append([]*Tensor(nil), ws.tensors...) }

// Alloc places every weight in one buffer of the backend's primary device
// (Metal memory on a Mac, host memory on the CPU). Set contents afterwards.
func (ws *WeightSet) Alloc() error {
	if ws.buf != nil || ws.freed {
		return fmt.Errorf("ggml: weight set already allocated or freed")
	}
	if len(ws.tensors) == 0 {
		return fmt.Errorf("ggml: weight set is empty")
	}
	be, _ := ws.b.primary()
	ws.buf = cAllocCtxTensors(ws.ctx, cDefaultBuft(be))
	ws.bufs.buf = ws.buf
	if ws.buf == nil {
		return fmt.Errorf("ggml: cannot allocate %d bytes of weights on %s: %w", ws.Size(), ws.b.caps.Name, ErrOutOfMemory)
	}
	cBufferMarkWeights(ws.buf)
	return nil
}

// AllocHost places the weights over mem without copying, where the device
// allows it (the CPU always; Metal on Apple silicon): weight t occupies
// mem[offsets[t.Name()]:][:t.NBytes()]. mem must stay mapped while the set
// is in use, must not be Go heap memory (use an mmapped file), and must start
// on a page boundary; offsets must be multiples of 32. Such weights are
// read-only. Where the device cannot map host memory, AllocHost falls back to
// Alloc plus a copy and reports zeroCopy=false.
func (ws *WeightSet) AllocHost(mem []byte, offsets map[string]int) (zeroCopy bool, err error) {
	if ws.buf != nil || ws.freed {
		return false, fmt.Errorf("ggml: weight set already allocated or freed")
	}
	if len(mem) == 0 {
		return false, fmt.Errorf("ggml: AllocHost: empty memory")
	}
	if uintptr(unsafe.Pointer(&mem[0]))%uintptr(os.Getpagesize()) != 0 {
		return false, fmt.Errorf("ggml: AllocHost: memory does not start on a page boundary")
	}
	for _, t := range ws.tensors {
		off, ok := offsets[t.Name()]
		if !ok {
			return false, fmt.Errorf("ggml: AllocHost: no offset for weight %s", t)
		}
		if off < 0 || off%32 != 0 || off+t.NBytes() > len(mem) {
			return false, fmt.Errorf("ggml: AllocHost: weight %s at offset %d (+%d bytes) is misaligned or outside %d bytes", t, off, t.NBytes(), len(mem))
		}
	}
	if !ws.b.caps.ZeroCopy {
		if err := ws.Alloc(); err != nil {
			return false, err
		}
		for _, t := range ws.tensors {
			off := offsets[t.Name()]
			cTensorSet(t.h, mem[off:off+t.NBytes()], 0)
		}
		return false, nil
	}
	_, dev := ws.b.primary()
	base := unsafe.Pointer(&mem[0])
	maxT := 0
	for _, t := range ws.tensors {
		maxT = max(maxT, t.NBytes())
	}
	ws.buf = cBufferFromHostPtr(dev, base, len(mem), maxT)
	ws.bufs.buf = ws.buf
	if ws.buf == nil {
		// Metal refuses a no-copy buffer beyond its working set.
		return false, fmt.Errorf("ggml: %s cannot map %d bytes of host memory: %w", ws.b.caps.Name, len(mem), ErrOutOfMemory)
	}
	cBufferMarkWeights(ws.buf)
	for _, t := range ws.tensors {
		if !cTensorAlloc(ws.buf, t.h, unsafe.Add(base, offsets[t.Name()])) {
			return false, fmt.Errorf("ggml: AllocHost: cannot place weight %s", t)
		}
	}
	ws.readOnly = true
	return true, nil
}

// Size is the total byte size of the weights.
func (ws *WeightSet) Size() int {
	n := 0
	for _, t := range ws.tensors {
		n += t.NBytes()
	}
	return n
}

// Free releases the buffer (not caller memory given to AllocHost) and context.
func (ws *WeightSet) Free() {
	if ws.freed {
		return
	}
	ws.freed = true
	ws.cleanup.Stop()
	freeWeights(ws.bufs)
	ws.buf = nil
}

func (ws *WeightSet) allocated() bool { return ws.buf != nil && !ws.freed }

func (ws *WeightSet) upload(t *Tensor, data []byte) {
	if !ws.allocated() {
		panicf("set weight %s: call Alloc first", t)
	}
	if ws.readOnly {
		panicf("set weight %s: weights placed over host memory are read-only", t)
	}
	cTensorSet(t.h, data, 0)
}

func (ws *WeightSet) uploadAt(t *Tensor, data []byte, off int) {
	if !ws.allocated() {
		panicf("set weight %s: call Alloc first", t)
	}
	if ws.readOnly {
		panicf("set weight %s: weights placed over host memory are read-only", t)
	}
	cTensorSet(t.h, data, off)
}

func (ws *WeightSet) checkReadable(t *Tensor) {
	if !ws.allocated() {
		panicf("read weight %s: set not allocated", t)
	}
}
