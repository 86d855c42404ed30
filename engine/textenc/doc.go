// Package textenc is MiniMax-H3's prompt and reference encoder: Qwen3-VL's
// vision tower and the first 50 of its 64 language layers, built as ggml
// graphs. It turns a presentation (engine/layout spans realised with
// engine/tokenizer ids, see Model.Realise) plus the reference images and
// 2-fps video blocks into the raw residual stream after the last layer
// run, one row per token, with each row's DiT modality tag.
//
// Reference: HF transformers' Qwen3-VL (modeling_qwen3_vl.py) for the math,
// ComfyUI's comfy/text_encoders/minimax.py for how H3 presents and reads
// it. Parity fixtures come from tools/fixtures/textenc/gen.py (HF run on a
// tiny config); a float64 Go transcription of the same math (the _test
// files) checks what no fixture covers.
//
// # Axes
//
// Activations are ggml-ordered [hidden, tokens]: one token per row of
// ne0 = hidden. Host slices are row-major with the same meaning (token t's
// features at [t*hidden, (t+1)*hidden)).
//
// # Sequence length
//
// A layer runs as graphs of at most Options.RowGroup token rows: one pass
// computes every row's rotated keys and values (in the K/V type
// engine/ggml's Attention uses, so it converts nothing), then each row
// group calls ggml's causal Attention with its queries against the keys up
// to its last row, in query chunks of Options.QueryChunk rows whose masks
// ggml builds on the device from inputs linear in the length. The rows'
// hidden states and the layer's keys and values stay in device memory for
// the whole prefill (prefill.go); graphs read and write them through
// views, and the rows cross to the host once each way. Memory grows
// linearly with the sequence (plan.Dims.QwenPrefillBytes; measured on the
// H200: 1.85 GB at 10,231 tokens, 4.17 GB at 100,000), and no kernel holds
// a whole score row: the h3.c failure "causal attention sequence 10231
// exceeds threadgroup memory" cannot happen here.
//
// # Weights
//
// Layers load lazily through weights.LoadModule: resident, they stay;
// plan.Streamed frees each after it runs and loads the next one in the
// background. Close frees everything (the encode phase ends before the DiT
// loads).
package textenc
