// Package textenc is MiniMax-H3's prompt and reference encoder: Qwen3-VL's
// vision tower and the first 50 of its 64 language layers, built as ggml
// graphs. It turns a presentation (engine/layout spans realised with
// engine/tokenizer ids) plus the reference images and 2-fps video blocks
// into the raw residual stream after the last layer the plan runs, one row
// per token, with the DiT modality tag of each row.
//
// Reference: HF transformers' Qwen3-VL (modeling_qwen3_vl.py) for the math,
// ComfyUI's comfy/text_encoders/minimax.py for how H3 presents and reads it.
// Parity fixtures come from tools/fixtures/textenc/gen.py.
//
// # Axes
//
// Activations are ggml-ordered [hidden, tokens]: one token per row of
// ne0 = hidden. Host slices are row-major with the same meaning (token t's
// features at [t*hidden, (t+1)*hidden)).
//
// # Sequence length
//
// Causal attention runs in query chunks (engine/ggml's chunked attention
// with per-chunk masks), so no buffer grows as sequence squared and no
// kernel holds a whole score row: the h3.c failure "causal attention
// sequence 10231 exceeds threadgroup memory" cannot happen here.
package textenc
