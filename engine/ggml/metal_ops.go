package ggml

import "fmt"

// The Metal op audit: a Go copy of ggml-metal's supports_op
// (ggml_metal_device_supports_op in ggml-metal-device.m of the pinned ggml),
// for an Apple7+ GPU with bfloat (every M-series chip). A node it rejects
// would silently run on the CPU through the scheduler, with copies both ways;
// Audit lists them so Linux CI catches such fallbacks before a Mac does.
// Update the table when the pinned ollama version changes.

// Finding is one graph node that ggml-metal would not run.
type Finding struct {
	Node   Node
	Reason string
}

func (f Finding) String() string { return fmt.Sprintf("%s: %s", f.Node, f.Reason) }

// Audit returns the nodes of g that would fall back to the CPU on Metal.
func Audit(g *Graph) []Finding { return AuditNodes(g.Ops()) }

// AuditNodes is Audit over a node list (from Graph.Ops).
func AuditNodes(nodes []Node) []Finding {
	var out []Finding
	for _, n := range nodes {
		if ok, why := metalSupports(&n); !ok {
			out = append(out, Finding{Node: n, Reason: why})
		}
	}
	return out
}

// metalUnary lists the UNARY sub-ops ggml-metal runs (f32, contiguous).
var metalUnary = map[string]bool{
	"TANH": true, "RELU": true, "SIGMOID": true, "GELU": true, "GELU_ERF": true, "GELU_QUICK": true,
	"SILU": true, "ELU": true, "NEG": true, "ABS": true, "SGN": true, "STEP": true, "HARDSWISH": true,
	"HARDSIGMOID": true, "EXP": true, "SOFTPLUS": true, "EXPM1": true,
}

// metalGLU lists the GLU sub-ops ggml-metal runs (f32, contiguous rows).
var metalGLU = map[string]bool{
	"REGLU": true, "GEGLU": true, "SWIGLU": true, "SWIGLU_OAI": true, "GEGLU_ERF": true, "GEGLU_QUICK": true,
}

// metalFAHeadDims are the head sizes ggml-metal has flash-attention kernels for.
var metalFAHeadDims = map[int64]bool{32: true, 40: true, 48: true, 64: true, 72: true, 80: true, 96: true,
	112: true, 128: true, 192: true, 256: true, 576: true}

// metalCpy maps a CPY/CONT/DUP source type to the destination types ggml-metal converts it to.
var metalCpy = map[DType]map[DType]bool{
	F32:  {F32: true, F16: true, BF16: true, Q8_0: true, I32: true},
	F16:  {F32: true, F16: true},
	BF16: {F32: true, BF16: true},
	Q8_0: {F32: true, F16: true},
	I32:  {F32: true, I32: true},
}

func f32Contig(s *NodeSrc) bool { return s != nil && s.DType == F32 && s.Contiguous }
func denseRows(s *NodeSrc) bool { return s != nil && s.Strides[0] == int64(s.DType.BlockBytes()) }

func metalSupports(n *Node) (bool, string) {
	s0, s1 := n.src(0), n.src(1)
	switch n.Op {
	case "NONE", "RESHAPE", "VIEW", "TRANSPOSE", "PERMUTE", "CONCAT", "ACC", "REPEAT", "SCALE", "FILL",
		"CONV_TRANSPOSE_1D", "ROPE", "ARGSORT", "TOP_K", "ARANGE", "GET_ROWS", "MUL_MAT", "MUL_MAT_ID",
		"ARGMAX", "SSM_CONV", "SSM_SCAN", "RWKV_WKV6", "RWKV_WKV7":
		return true, ""
	case "UNARY":
		if !metalUnary[n.Desc] {
			return false, "unary op " + n.Desc + " has no Metal kernel"
		}
		return f32Contig(s0), "unary ops need a contiguous f32 source"
	case "GLU":
		if !metalGLU[n.Desc] {
			return false, "glu op " + n.Desc + " has no Metal kernel"
		}
		return f32Contig(s0), "glu ops need a contiguous f32 source"
	case "ADD", "SUB", "MUL", "DIV", "ADD_ID", "CLAMP", "PAD_REFLECT_1D", "TIMESTEP_EMBEDDING", "LEAKY_RELU", "POOL_2D":
		return s0 != nil && s0.DType == F32, "needs an f32 first source"
	case "SQR", "SQRT", "SIN", "COS", "LOG":
		return f32Contig(s0), "needs a contiguous f32 source"
	case "SUM":
		return s0 != nil && s0.Contiguous, "needs a contiguous source"
	case "SUM_ROWS", "CUMSUM", "MEAN", "SOFT_MAX", "GROUP_NORM", "NORM", "RMS_NORM", "TRI":
		return denseRows(s0), "needs a source with dense rows"
	case "L2_NORM":
		return n.Shape[0]%4 == 0 && s0 != nil && s0.Contiguous, "needs ne0 % 4 == 0 and a contiguous source"
	case "IM2COL":
		return f32Contig(s1) && (n.DType == F16 || n.DType == F32), "needs contiguous f32 data and an f16/f32 result"
	case "CONV_2D":
		return s0 != nil && s0.Contiguous && (s0.DType == F16 || s0.DType == F32) && s1 != nil && s1.DType == F32 && n.DType == F32,
			"needs a contiguous f16/f32 kernel, f32 data and result"
	case "CONV_TRANSPOSE_2D":
		return s0 != nil && s0.Contiguous && (s0.DType == F16 || s0.DType == F32) && f32Contig(s1) && n.DType == F32,
			"needs contiguous f16/f32 kernel and f32 data"
	case "UPSCALE":
		return s0 != nil && s0.DType == F32 && n.Params[0] == scaleNearest, "only nearest-neighbour upscale (use BilinearUp2)"
	case "PAD":
		if n.Params[8] != 0 {
			return false, "circular padding"
		}
		return n.Params[0] == 0 && n.Params[2] == 0 && n.Params[4] == 0 && n.Params[6] == 0, "left padding (use PadLeft)"
	case "FLASH_ATTN_EXT":
		k, v := n.src(1), n.src(2)
		if s0 == nil || k == nil || v == nil || !metalFAHeadDims[s0.Shape[0]] {
			return false, "head dim has no Metal flash-attention kernel"
		}
		return k.DType == v.DType, "K and V types differ"
	case "CPY", "DUP", "CONT":
		if s0 == nil {
			return false, "no source"
		}
		return metalCpy[s0.DType][n.DType], fmt.Sprintf("no Metal copy from %s to %s", s0.DType, n.DType)
	case "SET_ROWS":
		return s0 != nil && s0.DType == F32 && (n.DType == F32 || n.DType == F16 || n.DType == BF16 || n.DType == Q8_0),
			"needs f32 rows into f32/f16/bf16/q8_0"
	}
	return false, "op " + n.Op + " has no Metal kernel"
}
