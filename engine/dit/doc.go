// Package dit is the MiniMax-H3 diffusion transformer: a single-stream
// joint audio-video DiT over one packed sequence
// [text | conditions/references | target audio | target video], built as
// ggml graphs through engine/ggml and parameterised entirely by the
// checkpoint's config, so the same code runs the 33B release on a Mac and
// the tiny random-weight models in tests.
//
// What runs when:
//   - once per generation: the text path (condition_proj, the 2-block token
//     refiner without AdaLN or RoPE, the final norm) — EncodeText;
//   - once per run: the AdaLN modulation tables for every (timestep,
//     modality) the schedule uses, after which the 39 % of the weights that
//     are adaln_proj are released — PrepareAdaLN;
//   - every step: patch projections, the blocks, the final AdaLN and the F32
//     heads on the target rows only — Forward (and Generation, the
//     sampler.Denoiser that keeps conditions pinned).
//
// A run, end to end:
//
//	cfg, _ := dit.ConfigFor(src, configJSON)           // config.json, repack metadata or shapes
//	m, _ := dit.Load(backend, src, cfg, dit.Options{QKV: component.QKV})
//	seq, _ := m.SequenceFor(plannedLayout)               // engine/layout rows and RoPE positions
//	text, _ := m.EncodeText(qwenStates, textRows)
//	sched, _ := sampler.NewSchedule(steps, 12, 3)
//	_ = m.PrepareAdaLN(dit.StepTimesteps(sched))
//	gen, _ := m.NewGeneration(seq, text, condVideoRows, refAudioRows, [4]int{24, t, h, w}, ta)
//	err := sampler.Run(ctx, sampler.Config{Schedule: sched}, gen, videoNoise, audioNoise)
//
// Weights are resident (placed once, zero-copy over the mapped file where
// its alignment allows) or plan.Streamed (two rotating block slots);
// matrices can be converted at load (Options.Precision: bf16, f16, q8_0,
// q4_K). Speed policies, each
// with its own config: layer thinning (sampler.ThinningConfig over
// GateScores, applied with SetActive), core residual reuse (corereuse.go),
// token reduction (tokenreduce.go) and velocity reuse in the sampler.
// The two that act inside a forward wrap spans of blocks through one
// policy interface (policy.go), so the resident graph and the streamed
// per-block graphs run the same builder, runBlocks.
//
// LoRA adapters (engine/lora) apply at run time (lora.go, SetLoRAs): each
// updated linear gains a side path y += s·B·(A·x) with A and B resident
// beside the base (f16, f32 in exact runs), whatever the base's type or
// residency; adaln_proj updates are folded in f32 into the modulation
// tables where PrepareAdaLN builds them. A strength of 0 skips the path.
//
// # Axis order
//
// Graph tensors are in ggml order (ne0 fastest). Row-major [rows, width]
// host buffers are ggml [width, rows]: hidden states are [hidden, rows],
// per-head tensors [head_dim, heads, rows], attention inputs
// [head_dim, rows, heads]. Checkpoint shapes (PyTorch [out, in]) become
// ggml [in, out] weights. Latents on the host are the reference's
// row-major tensors: video [24, T, H/16, W/16], audio [32, 2, Ta].
//
// Tap names (Model.Tap) equal the parity fixtures' tensor names in
// tools/fixtures/dit.
//
// References: ComfyUI comfy/ldm/minimax/model.py (the parity reference),
// stable-diffusion.cpp minimax_h3.hpp, antirez/h3.c h3_dit.c.
package dit
