package plan

// LoRA is one low-rank adapter a request applies at run time
// (engine/lora, engine/dit's side path). Path and Strength are the
// request's; Engine.Plan fills the costs from the file's header when it
// matches the adapter to the model.
type LoRA struct {
	Path     string  `json:"path"`
	Strength float64 `json:"strength"`
	// QKV is how the adapter's fused qkv rows are read: "" or "auto"
	// (decided from the file), "flat" or "interleaved".
	QKV string `json:"qkv,omitempty"`
	// ResidentBytes are its factors kept on the device beside the DiT
	// through the denoise loop (every update but the AdaLN ones, which are
	// folded into the modulation tables).
	ResidentBytes int64 `json:"resident_bytes,omitempty"`
	// BlockRowParams is Σ rank·(in+out) over the DiT blocks' side paths:
	// a forward spends 2·BlockRowParams FLOP per row on them.
	BlockRowParams int64 `json:"block_row_params,omitempty"`
}

// loraCost is what the request's adapters add to the denoise loop: device
// bytes and side-path parameters per row per forward (an adapter at
// strength 0 is skipped by the engine and costs nothing).
func loraCost(ls []LoRA) (bytes, rowParams int64) {
	for _, l := range ls {
		if l.Strength != 0 {
			bytes += l.ResidentBytes
			rowParams += l.BlockRowParams
		}
	}
	return bytes, rowParams
}
