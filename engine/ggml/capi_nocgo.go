// The !cgo twin of capi_cgo.go and capi_backend_cgo.go: one panicking body
// per wrapper, so the op layer (validation included) still compiles and vets
// for darwin with CGO_ENABLED=0. A wrapper missing here fails that vet.

//go:build !cgo

package ggml

import "unsafe"

// Without cgo there is no ggml: every wrapper panics with ErrNoCgo, and
// NewBackend returns it before any of them can be reached.

const haveCgo = false

func cInit(memSize int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cFree(ctx unsafe.Pointer) {
	panic(ErrNoCgo)
}

func cTensorOverhead() int {
	panic(ErrNoCgo)
}

func cGraphOverhead(nodes int) int {
	panic(ErrNoCgo)
}

func cNewTensor(ctx unsafe.Pointer, dt DType, ne [4]int64, dims int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cSetName(h unsafe.Pointer, name string) {
	panic(ErrNoCgo)
}

func cName(h unsafe.Pointer) string {
	panic(ErrNoCgo)
}

func cSetInput(h unsafe.Pointer) {
	panic(ErrNoCgo)
}

func cSetOutput(h unsafe.Pointer) {
	panic(ErrNoCgo)
}

func cIsContiguous(h unsafe.Pointer) bool {
	panic(ErrNoCgo)
}

func cHasBuffer(h unsafe.Pointer) bool {
	panic(ErrNoCgo)
}

func cNBytes(h unsafe.Pointer) int {
	panic(ErrNoCgo)
}

func cInfo(h unsafe.Pointer) (dt DType, ne [4]int64, nb [4]int64) {
	panic(ErrNoCgo)
}

func cViewBounds(h unsafe.Pointer) (offs, size int) {
	panic(ErrNoCgo)
}

func cNewGraph(ctx unsafe.Pointer, nodes int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cBuildForward(gr, h unsafe.Pointer) {
	panic(ErrNoCgo)
}

func cGraphNodes(gr unsafe.Pointer) []unsafe.Pointer {
	panic(ErrNoCgo)
}

func cNode(h unsafe.Pointer) Node {
	panic(ErrNoCgo)
}

func cUnary(ctx unsafe.Pointer, op unaryOp, a unsafe.Pointer) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cBinary(ctx unsafe.Pointer, op binaryOp, a, b unsafe.Pointer) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cMulMatPrecF32(h unsafe.Pointer) {
	panic(ErrNoCgo)
}

func cScale(ctx, a unsafe.Pointer, s float32) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cNorm(ctx, a unsafe.Pointer, rms bool, eps float32) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cGroupNorm(ctx, a unsafe.Pointer, groups int, eps float32) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cRope(ctx, a, pos unsafe.Pointer, nDims, mode int, sections *[4]int, base, scale float32) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cFlashAttn(ctx, q, k, v, mask unsafe.Pointer, scale, softcap float32) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cSoftMax(ctx, a, mask unsafe.Pointer, scale float32) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cIm2Col(ctx, kernel, data unsafe.Pointer, s0, s1, p0, p1, d0, d1 int, is2D bool, dt DType) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cConvTranspose1D(ctx, kernel, data unsafe.Pointer, stride int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cInterpolate(ctx, a unsafe.Pointer, ne [4]int64, mode uint32) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cPad(ctx, a unsafe.Pointer, p [8]int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cConcat(ctx, a, b unsafe.Pointer, dim int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cView(ctx, a unsafe.Pointer, ne [4]int64, nb [3]int64, offset int64) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cPermute(ctx, a unsafe.Pointer, ax [4]int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cReshape(ctx, a unsafe.Pointer, ne [4]int64) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cCast(ctx, a unsafe.Pointer, dt DType) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cClamp(ctx, a unsafe.Pointer, lo, hi float32) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cRepeat(ctx, a unsafe.Pointer, ne [4]int64) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cDevCount() int {
	panic(ErrNoCgo)
}

func cDevGet(i int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cDevByType(t int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cDevProps(d unsafe.Pointer) devProps {
	panic(ErrNoCgo)
}

func cBackendLoad(path string) (name string, devices int, ok bool) {
	panic(ErrNoCgo)
}

func cDevInit(d unsafe.Pointer) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cBackendFree(b unsafe.Pointer) {
	panic(ErrNoCgo)
}

func cBackendName(b unsafe.Pointer) string {
	panic(ErrNoCgo)
}

func cBackendDevice(b unsafe.Pointer) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cSetThreads(b unsafe.Pointer, n int) {
	panic(ErrNoCgo)
}

func cDevSupportsOp(d, h unsafe.Pointer) bool {
	panic(ErrNoCgo)
}

func cSchedNew(backends []unsafe.Pointer, graphSize int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cSchedFree(s unsafe.Pointer) {
	panic(ErrNoCgo)
}

func cSchedReset(s unsafe.Pointer) {
	panic(ErrNoCgo)
}

func cSchedSplits(s unsafe.Pointer) int {
	panic(ErrNoCgo)
}

func cSchedAlloc(s, gr unsafe.Pointer) bool {
	panic(ErrNoCgo)
}

func cSchedReserve(s, gr unsafe.Pointer) bool {
	panic(ErrNoCgo)
}

func cSchedBufferSize(s, be unsafe.Pointer) int {
	panic(ErrNoCgo)
}

func cSchedCompute(s, gr unsafe.Pointer) int {
	panic(ErrNoCgo)
}

func cSchedTensorBackend(s, h unsafe.Pointer) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cTensorSet(h unsafe.Pointer, data []byte, offset int) {
	panic(ErrNoCgo)
}

func cTensorGet(h unsafe.Pointer, data []byte, offset int) {
	panic(ErrNoCgo)
}

func cDefaultBuft(b unsafe.Pointer) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cAllocCtxTensors(ctx, buft unsafe.Pointer) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cBufferMarkWeights(buf unsafe.Pointer) {
	panic(ErrNoCgo)
}

func cBufferFree(buf unsafe.Pointer) {
	panic(ErrNoCgo)
}

func cBufferSize(buf unsafe.Pointer) int {
	panic(ErrNoCgo)
}

func cBufferBase(buf unsafe.Pointer) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cBufferFromHostPtr(d, ptr unsafe.Pointer, size, maxTensor int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cCPUBufferFromPtr(ptr unsafe.Pointer, size int) unsafe.Pointer {
	panic(ErrNoCgo)
}

func cTensorAlloc(buf, h, addr unsafe.Pointer) bool {
	panic(ErrNoCgo)
}

func cQuantize(dt DType, src []float32, dst []byte, nrows, nPerRow int) int {
	panic(ErrNoCgo)
}

func cToFloat(dt DType, src []byte, dst []float32) {
	panic(ErrNoCgo)
}

func cF16ToF32(src []uint16, dst []float32) {
	panic(ErrNoCgo)
}

func cF32ToF16(src []float32, dst []uint16) {
	panic(ErrNoCgo)
}
