//go:build cgo

package ggml

/*
#include <stdlib.h>
#include <string.h>
#include "decls.h"
#include "enums.h"

// h3_pin_supported gives the scheduler every kernel node of g that dev can
// run as a fixed assignment to be (see Backend.pin).
static void h3_pin_supported(ggml_backend_sched_t s, struct ggml_cgraph * g, ggml_backend_t be, ggml_backend_dev_t dev) {
	int n = ggml_graph_n_nodes(g);
	for (int i = 0; i < n; i++) {
		struct ggml_tensor * t = ggml_graph_node(g, i);
		if (t->view_src == NULL && ggml_backend_dev_supports_op(dev, t)) {
			ggml_backend_sched_set_tensor_backend(s, t, be);
		}
	}
}

// h3_sched_reserve is ggml_backend_sched_reserve that leaves g's nodes as
// they were. Splitting a graph points every input a node takes from
// another backend at a copy made in the scheduler's context, and the next
// split (the alloc that follows) frees that context first: without the
// restore, the alloc would resolve those inputs through freed copies, and
// a GPU kernel behind a CPU fallback would read whatever tensor the new
// context put there (an index reading a float hidden state's bits).
static bool h3_sched_reserve(ggml_backend_sched_t s, struct ggml_cgraph * g) {
	int n = ggml_graph_n_nodes(g);
	struct ggml_tensor ** saved = malloc(sizeof(*saved) * (size_t)(n > 0 ? n : 1) * H3_GGML_MAX_SRC);
	if (saved == NULL) {
		return false;
	}
	for (int i = 0; i < n; i++) {
		memcpy(&saved[(size_t)i * H3_GGML_MAX_SRC], ggml_graph_node(g, i)->src, sizeof(*saved) * H3_GGML_MAX_SRC);
	}
	bool ok = ggml_backend_sched_reserve(s, g);
	for (int i = 0; i < n; i++) {
		memcpy(ggml_graph_node(g, i)->src, &saved[(size_t)i * H3_GGML_MAX_SRC], sizeof(*saved) * H3_GGML_MAX_SRC);
	}
	free(saved);
	return ok;
}

static void h3_call_to_float(ggml_to_float_t f, const void * x, float * y, int64_t k) { f(x, y, k); }
*/
import "C"

import "unsafe"

func cDevCount() int                             { return int(C.ggml_backend_dev_count()) }
func cDevGet(i int) unsafe.Pointer               { return unsafe.Pointer(C.ggml_backend_dev_get(C.size_t(i))) }
func cDevByType(t int) unsafe.Pointer            { return unsafe.Pointer(C.ggml_backend_dev_by_type(C.uint(t))) }
func cdev(d unsafe.Pointer) C.ggml_backend_dev_t { return C.ggml_backend_dev_t(d) }
func cbe(b unsafe.Pointer) C.ggml_backend_t      { return C.ggml_backend_t(b) }

func cDevProps(d unsafe.Pointer) devProps {
	var p C.struct_ggml_backend_dev_props
	C.ggml_backend_dev_get_props(cdev(d), &p)
	var free, total C.size_t
	C.ggml_backend_dev_memory(cdev(d), &free, &total)
	return devProps{
		name:              C.GoString(C.ggml_backend_dev_name(cdev(d))),
		description:       C.GoString(C.ggml_backend_dev_description(cdev(d))),
		memFree:           uint64(free),
		memTotal:          uint64(total),
		typ:               int(C.ggml_backend_dev_type(cdev(d))),
		bufferFromHostPtr: bool(p.caps.buffer_from_host_ptr),
		hostBuffer:        bool(p.caps.host_buffer),
		async:             bool(p.caps.async),
		integrated:        p.integrated != 0,
	}
}

func cDevInit(d unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer(C.ggml_backend_dev_init(cdev(d), nil))
}
func cBackendFree(b unsafe.Pointer)        { C.ggml_backend_free(cbe(b)) }
func cBackendName(b unsafe.Pointer) string { return C.GoString(C.ggml_backend_name(cbe(b))) }
func cBackendDevice(b unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer(C.ggml_backend_get_device(cbe(b)))
}
func cSetThreads(b unsafe.Pointer, n int) { C.ggml_backend_cpu_set_n_threads(cbe(b), C.int(n)) }
func cDevSupportsOp(d, h unsafe.Pointer) bool {
	return bool(C.ggml_backend_dev_supports_op(cdev(d), ct(h)))
}

func cSchedNew(backends []unsafe.Pointer, graphSize int) unsafe.Pointer {
	bs := (*[8]C.ggml_backend_t)(C.malloc(C.size_t(8 * unsafe.Sizeof(C.ggml_backend_t(nil)))))
	defer C.free(unsafe.Pointer(bs))
	for i, b := range backends {
		bs[i] = cbe(b)
	}
	return unsafe.Pointer(C.ggml_backend_sched_new(&bs[0], nil, C.int(len(backends)), C.size_t(graphSize), false, true))
}

func csched(s unsafe.Pointer) C.ggml_backend_sched_t { return C.ggml_backend_sched_t(s) }
func cSchedFree(s unsafe.Pointer)                    { C.ggml_backend_sched_free(csched(s)) }
func cSchedReset(s unsafe.Pointer)                   { C.ggml_backend_sched_reset(csched(s)) }
func cSchedSplits(s unsafe.Pointer) int              { return int(C.ggml_backend_sched_get_n_splits(csched(s))) }
func cSchedPinSupported(s, gr, be, dev unsafe.Pointer) {
	C.h3_pin_supported(csched(s), (*C.struct_ggml_cgraph)(gr), cbe(be), cdev(dev))
}
func cSchedAlloc(s, gr unsafe.Pointer) bool {
	return bool(C.ggml_backend_sched_alloc_graph(csched(s), (*C.struct_ggml_cgraph)(gr)))
}
func cSchedReserve(s, gr unsafe.Pointer) bool {
	return bool(C.h3_sched_reserve(csched(s), (*C.struct_ggml_cgraph)(gr)))
}
func cSchedBufferSize(s, be unsafe.Pointer) int {
	return int(C.ggml_backend_sched_get_buffer_size(csched(s), cbe(be)))
}
func cSchedCompute(s, gr unsafe.Pointer) int {
	return int(C.ggml_backend_sched_graph_compute(csched(s), (*C.struct_ggml_cgraph)(gr)))
}
func cSchedTensorBackend(s, h unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer(C.ggml_backend_sched_get_tensor_backend(csched(s), ct(h)))
}

func cTensorSet(h unsafe.Pointer, data []byte, offset int) {
	if len(data) == 0 {
		return
	}
	C.ggml_backend_tensor_set(ct(h), unsafe.Pointer(&data[0]), C.size_t(offset), C.size_t(len(data)))
}

func cTensorGet(h unsafe.Pointer, data []byte, offset int) {
	if len(data) == 0 {
		return
	}
	C.ggml_backend_tensor_get(ct(h), unsafe.Pointer(&data[0]), C.size_t(offset), C.size_t(len(data)))
}

func cDefaultBuft(b unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer(C.ggml_backend_get_default_buffer_type(cbe(b)))
}

func cAllocCtxTensors(ctx, buft unsafe.Pointer) unsafe.Pointer {
	return unsafe.Pointer(C.ggml_backend_alloc_ctx_tensors_from_buft(cctx(ctx), C.ggml_backend_buffer_type_t(buft)))
}

// cBufferMarkWeights tells ggml's scheduler that buf holds weights: it runs
// every op that reads a weight on the weight's device and grows the GPU's
// share from there. Unmarked, a graph whose first op reads only a host input
// (the DiT's x, the Qwen layer's rows) was given to the CPU, and ops next to
// it followed (seen on the H200: RMS_NORM, MUL, REPEAT, CONCAT on the CPU).
func cBufferMarkWeights(buf unsafe.Pointer) {
	C.ggml_backend_buffer_set_usage(C.ggml_backend_buffer_t(buf), C.H3_BUFFER_USAGE_WEIGHTS)
}

func cBufferHoldsWeights(buf unsafe.Pointer) bool {
	return C.ggml_backend_buffer_get_usage(C.ggml_backend_buffer_t(buf)) == C.H3_BUFFER_USAGE_WEIGHTS
}

func cBufferFree(buf unsafe.Pointer) { C.ggml_backend_buffer_free(C.ggml_backend_buffer_t(buf)) }
func cBufferSize(buf unsafe.Pointer) int {
	return int(C.ggml_backend_buffer_get_size(C.ggml_backend_buffer_t(buf)))
}
func cBufferBase(buf unsafe.Pointer) unsafe.Pointer {
	return C.ggml_backend_buffer_get_base(C.ggml_backend_buffer_t(buf))
}

func cBufferFromHostPtr(d, ptr unsafe.Pointer, size, maxTensor int) unsafe.Pointer {
	return unsafe.Pointer(C.ggml_backend_dev_buffer_from_host_ptr(cdev(d), ptr, C.size_t(size), C.size_t(maxTensor)))
}

func cCPUBufferFromPtr(ptr unsafe.Pointer, size int) unsafe.Pointer {
	return unsafe.Pointer(C.ggml_backend_cpu_buffer_from_ptr(ptr, C.size_t(size)))
}

func cTensorAlloc(buf, h, addr unsafe.Pointer) bool {
	return C.ggml_backend_tensor_alloc(C.ggml_backend_buffer_t(buf), ct(h), addr) == 0
}

func cQuantize(dt DType, src []float32, dst []byte, nrows, nPerRow int) int {
	return int(C.ggml_quantize_chunk(C.uint(dt), (*C.float)(&src[0]), unsafe.Pointer(&dst[0]), 0,
		C.int64_t(nrows), C.int64_t(nPerRow), nil))
}

func cToFloat(dt DType, src []byte, dst []float32) {
	tr := C.ggml_get_type_traits(C.uint(dt))
	C.h3_call_to_float(tr.to_float, unsafe.Pointer(&src[0]), (*C.float)(&dst[0]), C.int64_t(len(dst)))
}

func cF16ToF32(src []uint16, dst []float32) {
	C.ggml_fp16_to_fp32_row((*C.ggml_fp16_t)(&src[0]), (*C.float)(&dst[0]), C.int64_t(len(dst)))
}

func cF32ToF16(src []float32, dst []uint16) {
	C.ggml_fp32_to_fp16_row((*C.float)(&src[0]), (*C.ggml_fp16_t)(&dst[0]), C.int64_t(len(src)))
}

// cBackendLoad dlopens a backend library and registers its devices; ok is
// false when ggml could not load it (ggml logs why).
func cBackendLoad(path string) (name string, devices int, ok bool) {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	reg := C.ggml_backend_load(cs)
	if reg == nil {
		return "", 0, false
	}
	return C.GoString(C.ggml_backend_reg_name(reg)), int(C.ggml_backend_reg_dev_count(reg)), true
}
