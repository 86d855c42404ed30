package ggml

import (
	"fmt"
	"runtime"
	"unsafe"
)

// DefaultGraphNodes is the node capacity NewGraph uses when given 0.
const DefaultGraphNodes = 32768

// Graph is a ggml context (no_alloc: tensors carry only metadata until
// Compute) plus the compute graph built from it. Ops are methods of Graph;
// the tensors they take may come from this graph or from any WeightSet of
// the same Backend. A Graph is not safe for concurrent use.
type Graph struct {
	b       *Backend
	ctx     unsafe.Pointer
	gr      unsafe.Pointer
	size    int
	staged  map[unsafe.Pointer]staged
	outputs map[unsafe.Pointer]bool
	gen     uint64 // Backend.gen at the end of this graph's Compute; 0 if never computed
	freed   bool
	count   int                     // tensors made in ctx plus weights used: bounds nodes+leaves
	weights map[unsafe.Pointer]bool // weights already counted
	cleanup runtime.Cleanup
}

type staged struct {
	t    *Tensor
	data []byte
}

// NewGraph starts a graph that can hold up to maxNodes nodes (0 means
// DefaultGraphNodes). Free it when done.
func (b *Backend) NewGraph(maxNodes int) *Graph {
	if maxNodes <= 0 {
		maxNodes = DefaultGraphNodes
	}
	// every node is a tensor, and leaves and views need room too
	mem := 2*maxNodes*cTensorOverhead() + cGraphOverhead(maxNodes)
	ctx := cInit(mem)
	if ctx == nil {
		panicf("cannot allocate a graph context of %d bytes", mem)
	}
	g := &Graph{b: b, ctx: ctx, size: maxNodes, staged: map[unsafe.Pointer]staged{}, outputs: map[unsafe.Pointer]bool{},
		weights: map[unsafe.Pointer]bool{}}
	g.gr = cNewGraph(ctx, maxNodes)
	g.cleanup = runtime.AddCleanup(g, cFree, ctx)
	return g
}

// Backend returns the backend the graph computes on.
func (g *Graph) Backend() *Backend { return g.b }

// Free releases the graph's context. Its tensors must not be used afterwards.
func (g *Graph) Free() {
	if g.freed {
		return
	}
	g.freed = true
	g.cleanup.Stop()
	cFree(g.ctx)
	g.ctx, g.gr = nil, nil
}

func (g *Graph) live() {
	if g.freed {
		panicf("graph used after Free")
	}
}

// Input declares a graph input of the given dtype and ggml-order shape (1 to
// 4 axes). Set its contents with SetF32/SetI32/SetRaw before Compute.
func (g *Graph) Input(name string, dt DType, shape ...int) *Tensor {
	g.live()
	ne, dims := checkShape("Input "+name, dt, shape)
	g.grow("Input " + name)
	t := wrapTensor(cNewTensor(g.ctx, dt, ne, dims), g, nil)
	t.SetName("%s", name)
	cSetInput(t.h)
	return t
}

// checkShape validates a shape for a new tensor and returns it as ne.
func checkShape(what string, dt DType, shape []int) ([4]int64, int) {
	if !dt.Valid() {
		panicf("%s: unsupported dtype %d", what, int(dt))
	}
	if len(shape) < 1 || len(shape) > 4 {
		panicf("%s: shape %v must have 1 to 4 axes", what, shape)
	}
	ne := [4]int64{1, 1, 1, 1}
	for i, n := range shape {
		if n <= 0 {
			panicf("%s: shape %v has a non-positive axis", what, shape)
		}
		ne[i] = int64(n)
	}
	if ne[0]%int64(dt.BlockSize()) != 0 {
		panicf("%s: %s needs ne0 (%d) to be a multiple of %d", what, dt, ne[0], dt.BlockSize())
	}
	return ne, len(shape)
}

// Output marks tensors as results: they are kept (not overwritten by later
// nodes) and readable after Compute, and the graph is extended to compute them.
func (g *Graph) Output(ts ...*Tensor) {
	g.live()
	for _, t := range ts {
		g.own("Output", t)
		if t.ws != nil {
			panicf("Output %s: a weight is not a graph result", t)
		}
		cSetOutput(t.h)
		cBuildForward(g.gr, t.h)
		g.outputs[t.h] = true
	}
}

// Ops lists the graph's nodes in execution order (after Output).
func (g *Graph) Ops() []Node {
	g.live()
	hs := cGraphNodes(g.gr)
	out := make([]Node, len(hs))
	for i, h := range hs {
		out[i] = cNode(h)
	}
	return out
}

// Compute allocates the graph on the backend (inputs on the host, the rest
// on the GPU when there is one), uploads the staged inputs and runs it. Only
// one graph's results are held per Backend: results of the previously
// computed graph become unreadable.
func (g *Graph) Compute() error {
	g.live()
	if len(g.outputs) == 0 {
		return fmt.Errorf("ggml: compute: graph has no outputs (call Output)")
	}
	b := g.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cpu == nil {
		return fmt.Errorf("ggml: compute: backend is closed")
	}
	b.ensureSched(2 * g.size) // room for size nodes plus size leaves
	b.gen++                   // from here on, results of the previous graph are gone
	// ggml's allocator reuses its last plan for any graph with the same node
	// and leaf counts, which aliases tensors when the topology differs:
	// re-plan for every graph (cheap next to computing it).
	b.pin(g.gr)
	if !cSchedReserve(b.sched, g.gr) {
		return fmt.Errorf("ggml: compute: cannot reserve the graph's buffers: %w", ErrOutOfMemory)
	}
	b.pin(g.gr)
	if !cSchedAlloc(b.sched, g.gr) {
		return fmt.Errorf("ggml: compute: cannot allocate the graph's buffers: %w", ErrOutOfMemory)
	}
	for _, s := range g.staged {
		if !cHasBuffer(s.t.h) {
			return fmt.Errorf("ggml: compute: input %s is not used by any output", s.t)
		}
		cTensorSet(s.t.h, s.data, 0)
	}
	if st := cSchedCompute(b.sched, g.gr); st == statusAllocFailed {
		return fmt.Errorf("ggml: compute: backend failed to allocate: %w", ErrOutOfMemory)
	} else if st != 0 {
		return fmt.Errorf("ggml: compute: backend returned status %d", st)
	}
	b.splits = cSchedSplits(b.sched)
	if b.track && b.gpu != nil {
		b.recordFallback(g.gr)
	}
	g.gen = b.gen
	return nil
}

// Memory is the scratch memory a graph needs, per device.
type Memory struct {
	Device int // bytes on the primary device (the GPU, or the CPU when there is none)
	Host   int // bytes of host buffers for inputs and CPU fallbacks (0 without a GPU)
}

// Measure plans the graph's allocation without computing it and returns the
// compute buffers it needs (weights in WeightSets not included). It
// invalidates results of the previously computed graph, like Compute.
func (g *Graph) Measure() (Memory, error) {
	g.live()
	if len(g.outputs) == 0 {
		return Memory{}, fmt.Errorf("ggml: measure: graph has no outputs (call Output)")
	}
	b := g.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ensureSched(2 * g.size)
	b.gen++
	b.pin(g.gr)
	if !cSchedReserve(b.sched, g.gr) {
		return Memory{}, fmt.Errorf("ggml: measure: cannot reserve the graph's buffers: %w", ErrOutOfMemory)
	}
	be, _ := b.primary()
	m := Memory{Device: cSchedBufferSize(b.sched, be)}
	if b.gpu != nil {
		m.Host = cSchedBufferSize(b.sched, b.cpu)
	}
	return m, nil
}

func (g *Graph) stage(t *Tensor, data []byte) {
	g.live()
	g.staged[t.h] = staged{t: t, data: data}
}

func (g *Graph) checkReadable(t *Tensor) {
	g.live()
	if !g.outputs[t.h] {
		panicf("read %s: not marked with Graph.Output", t)
	}
	if g.gen == 0 {
		panicf("read %s: graph not computed", t)
	}
	if g.b.gen != g.gen { // the caller holds g.b.mu
		panicf("read %s: results were overwritten by a later Compute on the same backend", t)
	}
}

// own panics unless t can be used in g: made by g, or a weight of g's backend.
func (g *Graph) own(op string, ts ...*Tensor) {
	for i, t := range ts {
		if t == nil {
			panicf("%s: argument %d is nil", op, i)
		}
		switch {
		case t.g == g:
		case t.ws != nil && t.ws.b == g.b:
			if !t.ws.allocated() {
				panicf("%s: weight %s used before its WeightSet was allocated", op, t)
			}
			if !g.weights[t.h] {
				g.weights[t.h] = true
				g.grow(op)
			}
		default:
			panicf("%s: tensor %s belongs to another graph or backend", op, t)
		}
	}
}

func (g *Graph) wrap(h unsafe.Pointer) *Tensor {
	t := wrapTensor(h, g, nil)
	if g.count+1 >= g.size {
		g.grow(cNode(h).Desc)
	}
	g.count++
	return t
}

// grow counts one more tensor and panics before ggml's graph capacity
// assert could fire.
func (g *Graph) grow(op string) {
	g.count++
	if g.count >= g.size {
		panicf("%s: graph holds more than %d tensors; make it with a larger NewGraph size", op, g.size-1)
	}
}
