//go:build cgo

package ggml

/*
#include <stdlib.h>
#include "decls.h"
#include "enums.h"
*/
import "C"

import (
	"unsafe"

	_ "github.com/ollama/ollama/ml/backend/ggml/ggml/src" // compiles and links ggml and registers its backends
)

// Compile-time checks that the Go constants equal the C enum values in
// enums.h (which tools/abicheck checks against the real headers): a
// mismatch makes one of the uint conversions negative, which does not compile.
const (
	_ = uint(F32-C.H3_TYPE_F32) + uint(C.H3_TYPE_F32-F32)
	_ = uint(F16-C.H3_TYPE_F16) + uint(C.H3_TYPE_F16-F16)
	_ = uint(BF16-C.H3_TYPE_BF16) + uint(C.H3_TYPE_BF16-BF16)
	_ = uint(Q8_0-C.H3_TYPE_Q8_0) + uint(C.H3_TYPE_Q8_0-Q8_0)
	_ = uint(Q4_K-C.H3_TYPE_Q4_K) + uint(C.H3_TYPE_Q4_K-Q4_K)
	_ = uint(I32-C.H3_TYPE_I32) + uint(C.H3_TYPE_I32-I32)
	_ = uint(ropeNeoX-C.H3_ROPE_NEOX) + uint(C.H3_ROPE_NEOX-ropeNeoX)
	_ = uint(ropeMulti-C.H3_ROPE_MROPE) + uint(C.H3_ROPE_MROPE-ropeMulti)
	_ = uint(ropeVision-C.H3_ROPE_VISION) + uint(C.H3_ROPE_VISION-ropeVision)
	_ = uint(ropeIMRoPE-C.H3_ROPE_IMROPE) + uint(C.H3_ROPE_IMROPE-ropeIMRoPE)
	_ = uint(scaleNearest-C.H3_SCALE_NEAREST) + uint(C.H3_SCALE_NEAREST-scaleNearest)
	_ = uint(scaleBilinear-C.H3_SCALE_BILINEAR) + uint(C.H3_SCALE_BILINEAR-scaleBilinear)
	_ = uint(devCPU-C.H3_DEV_CPU) + uint(C.H3_DEV_CPU-devCPU)
	_ = uint(devGPU-C.H3_DEV_GPU) + uint(C.H3_DEV_GPU-devGPU)
	_ = uint(devIGPU-C.H3_DEV_IGPU) + uint(C.H3_DEV_IGPU-devIGPU)
	_ = uint(statusAllocFailed-C.H3_STATUS_ALLOC_FAILED) + uint(C.H3_STATUS_ALLOC_FAILED-statusAllocFailed)
)

const haveCgo = true

type ctensor = C.struct_ggml_tensor

func ct(h unsafe.Pointer) *ctensor                 { return (*ctensor)(h) }
func cctx(h unsafe.Pointer) *C.struct_ggml_context { return (*C.struct_ggml_context)(h) }
func up(t *ctensor) unsafe.Pointer                 { return unsafe.Pointer(t) }

func cInit(memSize int) unsafe.Pointer {
	p := C.struct_ggml_init_params{mem_size: C.size_t(memSize), no_alloc: true}
	return unsafe.Pointer(C.ggml_init(p))
}

func cFree(ctx unsafe.Pointer)     { C.ggml_free(cctx(ctx)) }
func cTensorOverhead() int         { return int(C.ggml_tensor_overhead()) }
func cGraphOverhead(nodes int) int { return int(C.ggml_graph_overhead_custom(C.size_t(nodes), false)) }

func cNewTensor(ctx unsafe.Pointer, dt DType, ne [4]int64, dims int) unsafe.Pointer {
	cne := [4]C.int64_t{C.int64_t(ne[0]), C.int64_t(ne[1]), C.int64_t(ne[2]), C.int64_t(ne[3])}
	return up(C.ggml_new_tensor(cctx(ctx), C.uint(dt), C.int(dims), &cne[0]))
}

func cSetName(h unsafe.Pointer, name string) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	C.ggml_set_name(ct(h), cs)
}

func cName(h unsafe.Pointer) string       { return C.GoString(&ct(h).name[0]) }
func cSetInput(h unsafe.Pointer)          { C.ggml_set_input(ct(h)) }
func cSetOutput(h unsafe.Pointer)         { C.ggml_set_output(ct(h)) }
func cIsContiguous(h unsafe.Pointer) bool { return bool(C.ggml_is_contiguous(ct(h))) }
func cHasBuffer(h unsafe.Pointer) bool    { return ct(h).buffer != nil }
func cNBytes(h unsafe.Pointer) int        { return int(C.ggml_nbytes(ct(h))) }

func cInfo(h unsafe.Pointer) (dt DType, ne [4]int64, nb [4]int64) {
	t := ct(h)
	for i := range 4 {
		ne[i] = int64(t.ne[i])
		nb[i] = int64(t.nb[i])
	}
	return DType(t._type), ne, nb
}

// cViewBounds returns the byte offset of h in its root tensor and the root's size.
func cViewBounds(h unsafe.Pointer) (offs, size int) {
	t := ct(h)
	if t.view_src == nil {
		return 0, int(C.ggml_nbytes(t))
	}
	return int(t.view_offs), int(C.ggml_nbytes(t.view_src))
}

func cNewGraph(ctx unsafe.Pointer, nodes int) unsafe.Pointer {
	return unsafe.Pointer(C.ggml_new_graph_custom(cctx(ctx), C.size_t(nodes), false))
}

func cBuildForward(gr, h unsafe.Pointer) {
	C.ggml_build_forward_expand((*C.struct_ggml_cgraph)(gr), ct(h))
}

func cGraphNodes(gr unsafe.Pointer) []unsafe.Pointer {
	cg := (*C.struct_ggml_cgraph)(gr)
	n := int(C.ggml_graph_n_nodes(cg))
	out := make([]unsafe.Pointer, n)
	for i := range n {
		out[i] = up(C.ggml_graph_node(cg, C.int(i)))
	}
	return out
}

// cNode describes one graph node for Graph.Ops and the Metal audit.
func cNode(h unsafe.Pointer) Node {
	t := ct(h)
	dt, ne, nb := cInfo(h)
	n := Node{
		Op:         C.GoString(C.ggml_op_name(t.op)),
		Desc:       C.GoString(C.ggml_op_desc(t)),
		Name:       cName(h),
		DType:      dt,
		Shape:      ne,
		Strides:    nb,
		Contiguous: cIsContiguous(h),
	}
	for i := range n.Params {
		n.Params[i] = int32(t.op_params[i])
	}
	for i := range int(C.H3_GGML_MAX_SRC) {
		s := t.src[i]
		if s == nil {
			continue
		}
		sdt, sne, snb := cInfo(up(s))
		n.Src = append(n.Src, NodeSrc{
			Name: C.GoString(&s.name[0]), DType: sdt, Shape: sne, Strides: snb,
			Contiguous: cIsContiguous(up(s)), Index: i,
		})
	}
	return n
}

func cUnary(ctx unsafe.Pointer, op unaryOp, a unsafe.Pointer) unsafe.Pointer {
	c, x := cctx(ctx), ct(a)
	var r *ctensor
	switch op {
	case uSilu:
		r = C.ggml_silu(c, x)
	case uGELUTanh:
		r = C.ggml_gelu(c, x)
	case uGELUErf:
		r = C.ggml_gelu_erf(c, x)
	case uSin:
		r = C.ggml_sin(c, x)
	case uCos:
		r = C.ggml_cos(c, x)
	case uSqr:
		r = C.ggml_sqr(c, x)
	case uSqrt:
		r = C.ggml_sqrt(c, x)
	case uTanh:
		r = C.ggml_tanh(c, x)
	case uExp:
		r = C.ggml_exp(c, x)
	case uSigmoid:
		r = C.ggml_sigmoid(c, x)
	case uCont:
		r = C.ggml_cont(c, x)
	case uTranspose:
		r = C.ggml_transpose(c, x)
	case uMean:
		r = C.ggml_mean(c, x)
	case uSumRows:
		r = C.ggml_sum_rows(c, x)
	case uLog:
		r = C.ggml_log(c, x)
	default:
		panic("ggml: internal: unknown unary op")
	}
	return up(r)
}

func cBinary(ctx unsafe.Pointer, op binaryOp, a, b unsafe.Pointer) unsafe.Pointer {
	c, x, y := cctx(ctx), ct(a), ct(b)
	var r *ctensor
	switch op {
	case bAdd:
		r = C.ggml_add(c, x, y)
	case bSub:
		r = C.ggml_sub(c, x, y)
	case bMul:
		r = C.ggml_mul(c, x, y)
	case bDiv:
		r = C.ggml_div(c, x, y)
	case bMulMat:
		r = C.ggml_mul_mat(c, x, y)
	case bSwiGLU:
		r = C.ggml_swiglu_split(c, x, y)
	case bGetRows:
		r = C.ggml_get_rows(c, x, y)
	case bCpy:
		r = C.ggml_cpy(c, x, y)
	default:
		panic("ggml: internal: unknown binary op")
	}
	return up(r)
}

func cMulMatPrecF32(h unsafe.Pointer) { C.ggml_mul_mat_set_prec(ct(h), C.H3_PREC_F32) }

func cScale(ctx, a unsafe.Pointer, s float32) unsafe.Pointer {
	return up(C.ggml_scale(cctx(ctx), ct(a), C.float(s)))
}

func cNorm(ctx, a unsafe.Pointer, rms bool, eps float32) unsafe.Pointer {
	if rms {
		return up(C.ggml_rms_norm(cctx(ctx), ct(a), C.float(eps)))
	}
	return up(C.ggml_norm(cctx(ctx), ct(a), C.float(eps)))
}

func cGroupNorm(ctx, a unsafe.Pointer, groups int, eps float32) unsafe.Pointer {
	return up(C.ggml_group_norm(cctx(ctx), ct(a), C.int(groups), C.float(eps)))
}

func cRope(ctx, a, pos unsafe.Pointer, nDims, mode int, sections *[4]int, base, scale float32) unsafe.Pointer {
	if sections == nil {
		return up(C.ggml_rope_ext(cctx(ctx), ct(a), ct(pos), nil, C.int(nDims), C.int(mode), 0,
			C.float(base), C.float(scale), 0, 1, 0, 0))
	}
	s := [4]C.int{C.int(sections[0]), C.int(sections[1]), C.int(sections[2]), C.int(sections[3])}
	return up(C.ggml_rope_multi(cctx(ctx), ct(a), ct(pos), nil, C.int(nDims), &s[0], C.int(mode), 0,
		C.float(base), C.float(scale), 0, 1, 0, 0))
}

func cFlashAttn(ctx, q, k, v, mask unsafe.Pointer, scale, softcap float32) unsafe.Pointer {
	r := C.ggml_flash_attn_ext(cctx(ctx), ct(q), ct(k), ct(v), ct(mask), C.float(scale), 0, C.float(softcap))
	C.ggml_flash_attn_ext_set_prec(r, C.H3_PREC_F32)
	return up(r)
}

func cSoftMax(ctx, a, mask unsafe.Pointer, scale float32) unsafe.Pointer {
	return up(C.ggml_soft_max_ext(cctx(ctx), ct(a), ct(mask), C.float(scale), 0))
}

func cIm2Col(ctx, kernel, data unsafe.Pointer, s0, s1, p0, p1, d0, d1 int, is2D bool, dt DType) unsafe.Pointer {
	return up(C.ggml_im2col(cctx(ctx), ct(kernel), ct(data), C.int(s0), C.int(s1), C.int(p0), C.int(p1),
		C.int(d0), C.int(d1), C.bool(is2D), C.uint(dt)))
}

func cConvTranspose1D(ctx, kernel, data unsafe.Pointer, stride int) unsafe.Pointer {
	return up(C.ggml_conv_transpose_1d(cctx(ctx), ct(kernel), ct(data), C.int(stride), 0, 1))
}

func cInterpolate(ctx, a unsafe.Pointer, ne [4]int64, mode uint32) unsafe.Pointer {
	return up(C.ggml_interpolate(cctx(ctx), ct(a), C.int64_t(ne[0]), C.int64_t(ne[1]), C.int64_t(ne[2]),
		C.int64_t(ne[3]), C.uint32_t(mode)))
}

func cPad(ctx, a unsafe.Pointer, p [8]int) unsafe.Pointer {
	return up(C.ggml_pad_ext(cctx(ctx), ct(a), C.int(p[0]), C.int(p[1]), C.int(p[2]), C.int(p[3]),
		C.int(p[4]), C.int(p[5]), C.int(p[6]), C.int(p[7])))
}

func cConcat(ctx, a, b unsafe.Pointer, dim int) unsafe.Pointer {
	return up(C.ggml_concat(cctx(ctx), ct(a), ct(b), C.int(dim)))
}

func cView(ctx, a unsafe.Pointer, ne [4]int64, nb [3]int64, offset int64) unsafe.Pointer {
	return up(C.ggml_view_4d(cctx(ctx), ct(a), C.int64_t(ne[0]), C.int64_t(ne[1]), C.int64_t(ne[2]), C.int64_t(ne[3]),
		C.size_t(nb[0]), C.size_t(nb[1]), C.size_t(nb[2]), C.size_t(offset)))
}

func cPermute(ctx, a unsafe.Pointer, ax [4]int) unsafe.Pointer {
	return up(C.ggml_permute(cctx(ctx), ct(a), C.int(ax[0]), C.int(ax[1]), C.int(ax[2]), C.int(ax[3])))
}

func cReshape(ctx, a unsafe.Pointer, ne [4]int64) unsafe.Pointer {
	return up(C.ggml_reshape_4d(cctx(ctx), ct(a), C.int64_t(ne[0]), C.int64_t(ne[1]), C.int64_t(ne[2]), C.int64_t(ne[3])))
}

func cCast(ctx, a unsafe.Pointer, dt DType) unsafe.Pointer {
	return up(C.ggml_cast(cctx(ctx), ct(a), C.uint(dt)))
}

func cClamp(ctx, a unsafe.Pointer, lo, hi float32) unsafe.Pointer {
	return up(C.ggml_clamp(cctx(ctx), ct(a), C.float(lo), C.float(hi)))
}

func cRepeat(ctx, a unsafe.Pointer, ne [4]int64) unsafe.Pointer {
	return up(C.ggml_repeat_4d(cctx(ctx), ct(a), C.int64_t(ne[0]), C.int64_t(ne[1]), C.int64_t(ne[2]), C.int64_t(ne[3])))
}
