package dit

import (
	"fmt"

	"h3studio/engine/ggml"
)

// A policy is a speed mode that wraps a span of blocks in one forward:
// enter maps the flow before the first active block of its span, exit
// after the span's last (before the first block past it, or after the
// forward's last block). Token reduction pools and restores the target
// video around its span; core reuse records the blocks' residual around
// all of them. Forward composes the policies a forward needs; runBlocks
// applies them, so the resident graph and the streamed per-block graphs
// run the same code.
type policy interface {
	wraps(block int) bool
	enter(f *flow)
	exit(f *flow)
}

// rowGrid is what blocks read per row for one row set (the full sequence,
// or token reduction's pooled one): the (timestep, modality) pair index
// and the RoPE tables.
type rowGrid struct {
	name     string // graph input prefix
	idx      []int32
	cos, sin []float32
}

// graphInputs are a row grid declared in one graph.
type graphInputs struct {
	idx      *ggml.Tensor // i32 [rows]: (timestep, modality) pair per row
	cos, sin *ggml.Tensor // [rope_dims/2, 1, rows]
}

// carried is a tensor a later block needs (what a policy keeps aside, or
// the hidden state itself). In one graph it is that graph's tensor; when
// blocks stream it outlives its graph as host data, declared again only in
// a graph that reads it (an unread one costs no upload).
type carried struct {
	name string
	g    *ggml.Graph
	t    *ggml.Tensor
	host []float32
	ne   []int
}

// in returns the tensor in g, uploading the host copy on first use there.
func (c *carried) in(g *ggml.Graph) *ggml.Tensor {
	if c.g != g {
		c.g, c.t = g, g.Input(c.name, ggml.F32, c.ne...)
		c.t.SetF32(c.host)
	}
	return c.t
}

// flow is the hidden state x [hidden, rows of grid] on its way through one
// forward's blocks, with the graph it is in and what policies keep aside.
type flow struct {
	g        *ggml.Graph
	x        *ggml.Tensor
	full     *rowGrid // the sequence's rows
	grid     *rowGrid // the rows x has now
	pols     []policy
	inside   []bool                   // per policy: entered and not yet exited
	streamed bool                     // another graph follows this one: kept tensors must survive it
	kept     []*carried               // by policies
	hidden   *carried                 // x between streamed graphs
	declared map[*rowGrid]graphInputs // in g
	mark     func(string, *ggml.Tensor)
	deliver  func()
	done     []func() // after g computes: policies read their outputs
}

func (m *Model) newFlow(s *Sequence, idx []int32, pols []policy, streamed bool) *flow {
	full := &rowGrid{idx: idx, cos: s.cos, sin: s.sin}
	return &flow{full: full, grid: full, pols: pols, inside: make([]bool, len(pols)), streamed: streamed}
}

// begin starts graph g; a hidden state the last graph left on the host
// becomes its input.
func (m *Model) begin(f *flow, g *ggml.Graph) {
	f.g, f.declared, f.done = g, map[*rowGrid]graphInputs{}, nil
	f.mark, f.deliver = m.tapper(g)
	if f.hidden != nil {
		f.x = f.hidden.in(g)
	}
}

// keep sets t aside under name until a later block of the forward reads it.
func (f *flow) keep(name string, t *ggml.Tensor) *carried {
	if f.streamed {
		f.g.Output(t)
	}
	c := &carried{name: name, g: f.g, t: t}
	f.kept = append(f.kept, c)
	return c
}

// inputs declares the current row grid in the graph (once per graph).
func (m *Model) inputs(f *flow) graphInputs {
	if gi, ok := f.declared[f.grid]; ok {
		return gi
	}
	r := f.grid
	half, rows := 3*m.Cfg.RopeFreqs, len(r.idx)
	gi := graphInputs{
		idx: f.g.Input(r.name+"mod_index", ggml.I32, rows),
		cos: f.g.Input(r.name+"rope_cos", ggml.F32, half, 1, rows),
		sin: f.g.Input(r.name+"rope_sin", ggml.F32, half, 1, rows),
	}
	gi.idx.SetI32(r.idx)
	gi.cos.SetF32(r.cos)
	gi.sin.SetF32(r.sin)
	f.declared[r] = gi
	return gi
}

// runBlocks runs the listed blocks over f.x in f's graph, entering and
// exiting the policies at their spans' edges; last says the list ends the
// forward's blocks, so every policy still inside exits after it.
func (m *Model) runBlocks(f *flow, list []int, last bool, cores []Core) {
	for _, i := range list {
		m.cross(f, i)
		gi := m.inputs(f)
		mod := m.modulation(f.g, i, gi.idx)
		a := attnCtx{cfg: m.Cfg, layout: m.qkv(), cos: gi.cos, sin: gi.sin, kv: m.opt.Precision.KV,
			side: m.side(fmt.Sprintf("blocks.%d.", i)), name: fmt.Sprintf("blk.%d.attn", i)}
		f.x = cores[i].Forward(f.g, f.x, mod, a, f.mark)
		if f.grid == f.full { // pooled rows match no fixture tensor
			f.mark(fmt.Sprintf("blk.%d.out", i), f.x)
		}
	}
	if last {
		m.cross(f, -1)
	}
}

// cross exits the policies whose span ends before block i (inner ones
// first, as they were entered last) and enters those whose span holds it;
// i = -1 is past every block.
func (m *Model) cross(f *flow, i int) {
	for k := len(f.pols) - 1; k >= 0; k-- {
		if f.inside[k] && (i < 0 || !f.pols[k].wraps(i)) {
			f.pols[k].exit(f)
			f.inside[k] = false
		}
	}
	for k, p := range f.pols {
		if i >= 0 && !f.inside[k] && p.wraps(i) {
			p.enter(f)
			f.inside[k] = true
		}
	}
}

// computeFlow runs f's graph and hands each result to its reader: taps,
// policies, and when another graph follows, the host copies of the hidden
// state and of every tensor kept in this graph.
func (m *Model) computeFlow(stage string, f *flow) error {
	if f.streamed {
		f.g.Output(f.x)
	}
	if err := m.compute(stage, f.g); err != nil {
		return err
	}
	f.deliver()
	for _, fn := range f.done {
		fn()
	}
	if !f.streamed {
		return nil
	}
	in := f.hidden
	f.hidden = &carried{name: "hidden", host: f.x.F32(), ne: []int{f.x.Ne(0), f.x.Ne(1)}}
	for _, c := range f.kept {
		if c.g == f.g && c.host == nil {
			c.ne = []int{c.t.Ne(0), c.t.Ne(1)}
			switch { // no second read-back of data the host holds
			case c.t == f.x:
				c.host = f.hidden.host
			case in != nil && c.t == in.t:
				c.host = in.host
			default:
				c.host = c.t.F32()
			}
		}
	}
	return nil
}
