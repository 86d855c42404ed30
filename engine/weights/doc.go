// Package weights finds MiniMax-H3 snapshots on disk and turns their
// tensors into model weights: it discovers the official tree
// (FL2VA/ and Ref2VA/ partitions of sharded safetensors), the Comfy-Org
// single-file repack and GGUF quantizations; reads each through one Source
// interface over memory-mapped files; records the DiT's QKV row layout from
// where the weights came from; fills tagged model structs (LoadModule);
// places weights in ggml backend buffers, zero-copy where the file allows it
// and by bounded direct copies where it does not (Residency); streams DiT
// blocks through two rotating buffers (BlockStreamer); writes the tiny
// random-weight snapshot every test loads (WriteTiny) and synthetic
// snapshots whose tensors are generated on the device when loaded
// (WriteSynthetic, a Seeded Source); and quantizes snapshots (Convert).
//
// # QKV row layout
//
// The fused qkv_proj rows are grouped per head in the MiniMaxAI release
// and flat ([all q | all k | all v]) in the Comfy-Org repack; names and
// shapes are identical, so Discover decides from provenance and records
// the answer and its reason on the transformer Component, in this order:
//
//  1. an explicit statement wins: "_h3studio": {"qkv_layout"} in
//     transformer/config.json, or "_minimax_h3": {"qkv_layout"} in the
//     partition's model_index.json (both written by Convert), or an
//     h3studio.qkv_layout key in a single file's metadata;
//  2. the official diffusers tree (model_index.json + transformer/) is
//     interleaved;
//  3. a single .safetensors file whose __metadata__ carries the repack's
//     "config" JSON (with a "transformer" entry) is flat;
//  4. a GGUF without the key is flat (community GGUFs are converted from
//     the repack by stable-diffusion.cpp, whose attention splits rows flat);
//  5. any other single file is refused rather than guessed.
//
// # Residency
//
// A tensor is placed zero-copy over the file mapping when its absolute file
// offset is a multiple of MapAlign (32, ggml's tensor alignment, which also
// satisfies Metal's 16) and it is kept in its stored dtype. The release's
// shards start their data at 8 mod 16, so none of their tensors qualify:
// LoadModule then copies each tensor straight from the mapping into a
// backend buffer (no staging copy), and BlockStreamer bounds what is
// resident to two DiT blocks. Nothing ever copies a whole shard into
// anonymous memory on its own initiative; memory_test.go asserts both
// bounds from RssAnon while loading a generated 1 GiB shard.
//
// Shapes here are in checkpoint order (PyTorch, row-major, slowest axis
// first), as safetensors headers and the reference code write them; GGUF
// dims are reversed on read so both formats describe a tensor alike.
//
// References: the safetensors format description, ggml's gguf.h, and the
// tensor names and config keys of the MiniMax-H3 release as read by ComfyUI
// (comfy/ldm/minimax), h3.c and stable-diffusion.cpp.
package weights
