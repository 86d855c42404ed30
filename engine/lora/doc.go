// Package lora reads low-rank adapters (LoRA) for the MiniMax-H3 DiT and
// maps them onto the checkpoint's modules, so engine/dit can apply them at
// run time as a side path beside the base weights (y = W·x + s·B·(A·x)):
// folding them into bf16 weights loses most of the update (vpipe measured
// 46-78 % kept), and a side path leaves q8_0/q4_K and streamed bases alone.
//
// Open reads a safetensors file's header (no tensor data) and detects its
// layout; Match checks it against the base model's shapes and returns the
// Adapter (the updates, their scales and a coverage report) or a *Misfit
// that says why it does not fit, before any weight is read. Update.Load
// reads one module's A and B as float32, with the layout's row reorders
// done.
//
// Layouts read (any of them with or without a "diffusion_model.",
// "transformer." or "model.diffusion_model." prefix):
//   - PEFT: <module>.lora_A.weight [r, in] and <module>.lora_B.weight
//     [out, r], also with PEFT's "base_model.model." prefix and ".default."
//     adapter infix; without an .alpha tensor alpha = rank (PEFT's
//     lora_alpha default for files saved without it);
//   - ComfyUI / kohya: <module>.lora_down.weight, <module>.lora_up.weight
//     and a scalar <module>.alpha (kohya's "lora_unet_" prefix with the
//     dots written as underscores too);
//   - diffusers: transformer_blocks.N / token_refiner.refiner_blocks.K /
//     norm_out.linear, attention split into to_q/to_k/to_v (fused here
//     exactly into the checkpoint's qkv_proj: A stacked [3r, in], B
//     block-diagonal [out, 3r], each part keeping its own alpha/rank),
//     to_out.0, and the FFN as ff.net.0.proj (value half first) / ff.net.2
//     (lightx2v's files, with PEFT's ".default." infix);
//   - the suffixes without ".weight" (PDD's .lora_down/.lora_up, TaoMate's
//     .lora_a/.lora_b).
//
// Tensors that are no pair (.diff, .set_weight, PDD's output heads) and
// PDD metadata are refused: they are part of what the file does.
//
// The scale of an update is strength·alpha/rank, rank from each module's
// shapes (larryvrh's Turbo is rank 64 on the core and 16 on AdaLN); alpha
// from the pair's .alpha tensor, else PEFT's adapter_config.json beside an
// adapter_model.safetensors (lora_alpha, alpha_pattern, use_rslora), else
// the file's header (alpha, lora_alpha, network_alpha), else lightx2v
// v0.1's 8, else the rank (alpha.go). The fused qkv_proj rows
// of the base are interleaved per head (MiniMaxAI release) or flat
// (Comfy-Org repack); an adapter's qkv B rows are mapped from the layout
// the adapter was made for (Options.QKV, decided in qkv.go) to the base's.
package lora
