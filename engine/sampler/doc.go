// Package sampler is MiniMax-H3's flow-matching sampler: the shifted sigma
// schedules of the video (shift 12) and audio (shift 3) streams, which
// advance in lockstep over one linear base grid; the Euler step
// x ← x + (σ − σ_next)·v on the data-ward velocity v ≈ x0 − ε the DiT
// returns; and the speed policies, each in its own file with its own
// config: velocity reuse (reuse.go) and layer thinning (thinning.go).
// Run reports every step to a preview hook; PreviewImage turns a latent
// frame into a cheap false-colour picture for it; Noise is the seeded,
// machine-independent Gaussian source of the initial latents.
//
// The checkpoints are guidance-distilled: there is no classifier-free
// guidance and no negative prompt, one positive forward per step.
//
// "Steps" means forwards: --steps N evaluates the DiT N times over the N+1
// grid points 1 − i/N (SGLang's num_inference_steps counts grid points,
// N+1 for the same run).
//
// References: SGLang minimax_h3 time_request.py (schedule) and
// denoise_loop.py (Euler update), antirez/h3.c h3_dit.c (reuse and gate
// ranking).
package sampler
