package ggml

// Internal codes shared by the Go op layer and the cgo (or !cgo) wrappers.

type unaryOp int

const (
	uSilu unaryOp = iota
	uGELUTanh
	uGELUErf
	uSin
	uCos
	uSqr
	uSqrt
	uTanh
	uExp
	uSigmoid
	uCont
	uTranspose
	uMean
	uSumRows
	uLog
)

type binaryOp int

const (
	bAdd binaryOp = iota
	bSub
	bMul
	bDiv
	bMulMat
	bSwiGLU
	bGetRows
	bCpy
)

// ggml constants the Go side passes through (checked against enums.h in capi_cgo.go).
const (
	ropeNeoX      = 2
	ropeMulti     = 8
	ropeVision    = 24
	ropeIMRoPE    = 40
	scaleNearest  = 0
	scaleBilinear = 1
	devCPU        = 0
	devGPU        = 1
	devIGPU       = 2
)

// devProps is what the wrappers report about a ggml device.
type devProps struct {
	name, description string
	memFree, memTotal uint64
	typ               int
	bufferFromHostPtr bool
	hostBuffer, async bool
	integrated        bool
}
