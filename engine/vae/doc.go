// Package vae holds the four codecs around the MiniMax-H3 DiT, built as ggml
// graphs: the video VAE encoder (a causal 3-D CNN: keyframes and reference
// clips to 24-channel latents), the video VAE decoder (a ViT over latent
// voxels: denoised latents back to RGB frames), the audio VAE encoder
// (DAC-style strided convolutions with Snake plus an attention projection:
// 32 kHz audio to 32-channel latents at 40 Hz) and the audio VAE decoder
// (BigVGAN with anti-aliased SnakeBeta: latents back to 32 kHz stereo).
//
// The numerics follow ComfyUI's comfy/ldm/minimax/vae.py and audio_vae.py,
// which mirror the release's remote code; tensor names and config keys are
// the official snapshot's (video_vae/config.json with
// video_vae/source/config.json and model.safetensors; audio_vae/config.json
// with metadata.json and model.safetensors, weight-normalised convolutions
// stored as weight_g/weight_v). Parity fixtures come from
// tools/fixtures/vae/gen.py.
//
// # Memory
//
// Both video directions are chunked the way the release chunks them: encode
// works on 17-frame clips and spatial tiles (vae_tile_size, overlap blended
// in latent space); decode works on 7-latent temporal chunks and spatial
// tiles (blended in pixel space), so peak memory depends on the tile, never
// on the clip length. The decoder tile shrinks to fit DecodeOptions.MemoryBudget,
// and encoder convolutions run in frame groups under VideoEncoder.ConvBudget.
// The audio decoder can run on latent windows with context on both sides
// (AudioOptions.ChunkLatents, ContextLatents), so a 15 s track need not be
// one graph; 8 latents of context keep it within 2e-3 of the one-graph decode.
//
// # Axis order
//
// Host-side tensors (Latent, Clip, Audio) use PyTorch's row-major order
// with the batch dropped: a video latent is [C][T][H][W], pixels are
// [3][T][H][W], audio is [2][samples]. Graph tensors are in ggml order:
// video activations [W, H, C, T] (per-frame group norm is ggml's group norm
// with frames on the outer axis), ViT tokens [dim, tokens], audio
// activations [L, C, stereo].
//
// # Metal
//
// Every graph is built only from ops ggml-metal runs (conv3d as 2-D im2col
// plus per-tap matmuls, causal padding by concatenation, reflect and
// replicate padding from views, depthwise resampling filters as im2col plus
// matmul); the tests run ggml.Audit on each one.
package vae
