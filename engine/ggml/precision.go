package ggml

import (
	"fmt"
	"slices"
)

// Storage is a requested element type, or no request. DType's zero value
// is F32, so a plain DType cannot say "keep what is there"; Storage's zero
// value can, and each use names its default (Or).
type Storage struct {
	dt  DType
	set bool
}

// StoreAs requests dt.
func StoreAs(dt DType) Storage { return Storage{dt, true} }

// Or returns the requested type, or def when none was requested.
func (s Storage) Or(def DType) DType {
	if s.set {
		return s.dt
	}
	return def
}

// Get returns the requested type and whether one was requested.
func (s Storage) Get() (DType, bool) { return s.dt, s.set }

// String is the requested type's name, or "default".
func (s Storage) String() string {
	if !s.set {
		return "default"
	}
	return s.dt.String()
}

// Precision is how a model keeps its weight matrices and its attention
// K/V. The zero value is the fast path: matrices as the checkpoint stores
// them, K/V in the backend's KVType (bf16 on the CPU, f16 on Metal).
// Vectors (norm gains, biases) are f32 whatever Weights says, because
// the graphs' elementwise ops are f32. Each model lists the weight types
// it accepts (Check).
type Precision struct {
	// Weights is the storage of weight matrices; F32 widens every one
	// (parity runs against an f32 reference of bf16-stored weights).
	Weights Storage
	// KV is the attention K/V type; F32 is reference precision, at about
	// 2-3x the CPU time.
	KV Storage
}

// Exact is reference precision: f32 matrices and f32 K/V.
func Exact() Precision { return Precision{Weights: StoreAs(F32), KV: StoreAs(F32)} }

// kvTypes are the K/V types flash attention reads.
var kvTypes = []DType{F32, F16, BF16}

// Check reports a weight type outside weights (the caller's list) or a
// K/V type flash attention cannot read; who names the caller ("dit").
func (p Precision) Check(who string, weights ...DType) error {
	if dt, ok := p.Weights.Get(); ok && !slices.Contains(weights, dt) {
		return fmt.Errorf("%s: cannot store weights as %s (use one of %v)", who, dt, weights)
	}
	if dt, ok := p.KV.Get(); ok && !slices.Contains(kvTypes, dt) {
		return fmt.Errorf("%s: cannot keep attention K/V as %s (use one of %v)", who, dt, kvTypes)
	}
	return nil
}
