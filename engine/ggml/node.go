package ggml

import (
	"fmt"
	"strings"
)

// Node describes one node of a built graph: what Graph.Ops returns and what
// the Metal audit inspects.
type Node struct {
	Op         string   // ggml op name, e.g. "MUL_MAT", "UNARY", "GLU"
	Desc       string   // op_desc: the unary/glu sub-op for UNARY/GLU ("SILU"), else Op
	Name       string   // tensor name (SetName), may be empty
	DType      DType    // result type
	Shape      [4]int64 // result ne
	Strides    [4]int64 // result nb in bytes
	Contiguous bool
	Params     [16]int32 // op_params as int32 words
	Src        []NodeSrc // non-nil sources in slot order
}

// NodeSrc describes one source of a Node.
type NodeSrc struct {
	Index      int // source slot (src[Index])
	Name       string
	DType      DType
	Shape      [4]int64
	Strides    [4]int64
	Contiguous bool
}

// src returns the source in slot i, or nil.
func (n *Node) src(i int) *NodeSrc {
	for k := range n.Src {
		if n.Src[k].Index == i {
			return &n.Src[k]
		}
	}
	return nil
}

// String formats the node as "DESC name [ne] dtype <- [src shapes]".
func (n Node) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", n.Desc)
	if n.Name != "" {
		fmt.Fprintf(&b, " %q", n.Name)
	}
	fmt.Fprintf(&b, " %v %s", n.Shape, n.DType)
	for _, s := range n.Src {
		fmt.Fprintf(&b, " src%d=%v %s", s.Index, s.Shape, s.DType)
	}
	return b.String()
}
