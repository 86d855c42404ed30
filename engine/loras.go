package engine

import (
	"fmt"

	"h3studio/engine/arch"
	"h3studio/engine/dit"
	"h3studio/engine/ggml"
	"h3studio/engine/lora"
	"h3studio/engine/plan"
	"h3studio/engine/weights"
)

// loraBase is what a partition's adapters are matched against.
type loraBase struct {
	cfg  *arch.DiT
	qkv  weights.QKVLayout
	part string
}

// loraBase is the partition's DiT config and qkv layout.
func (e *Engine) loraBase(part string) (loraBase, error) {
	p, m := e.partition(part), e.models[part]
	if p == nil || m == nil || p.Component(weights.Transformer) == nil {
		return loraBase{}, fmt.Errorf("engine: the snapshot at %s has no %s transformer for a LoRA", e.snap.Root, part)
	}
	return loraBase{cfg: m.DiT, qkv: p.Component(weights.Transformer).QKV, part: part}, nil
}

// openAdapters opens and matches the request's LoRAs, all or none: the
// first that does not fit is the error (a *lora.Misfit for a file that is
// no adapter of this model). The caller closes what it gets.
func (b loraBase) openAdapters(ls []plan.LoRA) ([]*lora.Adapter, error) {
	var out []*lora.Adapter
	for _, l := range ls {
		a, err := b.adapter(l.Path, l.QKV, false)
		if err != nil {
			closeAdapters(out)
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// adapter opens one LoRA file against the base; inspect keeps the adapter
// (for its coverage) when it does not fit.
func (b loraBase) adapter(path, qkv string, inspect bool) (*lora.Adapter, error) {
	choice, err := lora.ParseQKVChoice(qkv)
	if err != nil {
		return nil, err
	}
	f, err := lora.Open(path)
	if err != nil {
		return nil, err
	}
	a, err := lora.Inspect(f, lora.TargetOf(b.cfg, b.qkv, b.part), lora.Options{QKV: choice})
	if err != nil && !inspect {
		f.Close()
		return nil, err
	}
	return a, err
}

func closeAdapters(as []*lora.Adapter) {
	for _, a := range as {
		a.Close()
	}
}

// planLoRAs is loraBase.planLoRAs on the partition's DiT, at the engine's
// precision.
func (e *Engine) planLoRAs(r *plan.Request, part string) error {
	if len(r.LoRAs) == 0 {
		return nil
	}
	b, err := e.loraBase(part)
	if err != nil {
		return err
	}
	return b.planLoRAs(r, e.precision())
}

// planLoRAs matches the request's adapters (refusing a misfit before
// anything loads) and fills in what each costs the denoise loop, its
// factors stored as a render at precision keeps them.
func (b loraBase) planLoRAs(r *plan.Request, precision ggml.Precision) error {
	if len(r.LoRAs) == 0 {
		return nil
	}
	as, err := b.openAdapters(r.LoRAs)
	if err != nil {
		return err
	}
	defer closeAdapters(as)
	ls := append([]plan.LoRA(nil), r.LoRAs...)
	for i, a := range as {
		_, blocks := a.SideParams()
		ls[i].ResidentBytes, ls[i].BlockRowParams = dit.LoRABytes(a, precision), blocks
	}
	r.LoRAs = ls
	return nil
}

// InspectLoRA reports how the adapter at path covers the DiT of the
// snapshot at dir (`h3studio info --lora`): the partition part's, or when
// part is "" FL2VA's (the Turbo adapters') if the snapshot has it, else
// its first. The error says why the adapter does not fit, if it does not;
// the coverage is filled in whenever the file is an adapter. It reads
// headers only and starts no backend.
func InspectLoRA(dir, path, qkv, part string) (lora.Coverage, string, error) {
	snap, err := weights.Discover(dir)
	if err != nil {
		return lora.Coverage{}, "", err
	}
	models, err := readModels(snap)
	if err != nil {
		return lora.Coverage{}, "", err
	}
	e := &Engine{snap: snap, models: models}
	if part == "" && len(snap.Partitions) > 0 {
		part = snap.Partitions[0].Name
		if e.partition("fl2va") != nil {
			part = "fl2va"
		}
	}
	b, err := e.loraBase(part)
	if err != nil {
		return lora.Coverage{}, part, err
	}
	a, err := b.adapter(path, qkv, true)
	if a == nil {
		return lora.Coverage{}, part, err
	}
	defer a.Close()
	return a.Coverage, part, err
}

// applyLoRAs opens the plan's adapters on the loaded DiT; the returned
// function closes them after the model is released.
func (g *generation) applyLoRAs(m *dit.Model) (func(), error) {
	ls := g.plan.Request.LoRAs
	if len(ls) == 0 {
		return func() {}, nil
	}
	b, err := g.e.loraBase(g.part.Name)
	if err != nil {
		return nil, err
	}
	as, err := b.openAdapters(ls)
	if err != nil {
		return nil, err
	}
	list := make([]dit.LoRA, len(as))
	for i, a := range as {
		list[i] = dit.LoRA{Adapter: a, Strength: ls[i].Strength}
	}
	if err := m.SetLoRAs(list); err != nil {
		closeAdapters(as)
		return nil, err
	}
	return func() { closeAdapters(as) }, nil
}
