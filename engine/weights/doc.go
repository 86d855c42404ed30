// Package weights finds MiniMax-H3 snapshots on disk and turns their
// tensors into model weights: it discovers the official tree
// (FL2VA/ and Ref2VA/ partitions of sharded safetensors), the Comfy-Org
// single-file repack and GGUF quantizations; reads each through one Source
// interface over memory-mapped files; records the DiT's QKV row layout from
// where the weights came from; fills tagged model structs (LoadModule);
// places weights in ggml backend buffers, zero-copy where the file allows it
// and by bounded direct copies where it does not (Residency); streams DiT
// blocks through two rotating buffers (BlockStreamer); writes the tiny
// random-weight snapshot every test loads (WriteTiny); and quantizes
// snapshots (Convert).
//
// Shapes here are in checkpoint order (PyTorch, row-major, slowest axis
// first), as safetensors headers and the reference code write them; GGUF
// dims are reversed on read so both formats describe a tensor alike.
//
// References: the safetensors format description, ggml's gguf.h, and the
// tensor names and config keys of the MiniMax-H3 release as read by ComfyUI
// (comfy/ldm/minimax), h3.c and stable-diffusion.cpp.
package weights
