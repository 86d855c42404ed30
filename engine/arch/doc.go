// Package arch is MiniMax-H3's model description: the four checkpoint
// configs (the DiT's transformer/config.json, Qwen3-VL's text_encoder
// config, the video VAE's wrapper and source configs, the audio VAE's
// config and metadata kwargs), each declared once, parsed from the
// checkpoint's JSON and validated here.
//
// The model packages (dit, textenc, vae) run these types, the tiny-model
// writer (engine/weights) writes them, and the planner (engine/plan)
// computes its dimensions and parameter counts from them, so a number read
// from a snapshot is the same number everywhere. The release's configs
// (release/*.json) and the embedded tiny model's (tiny.go) are the two
// descriptions the project carries without a snapshot on disk.
//
// arch is pure Go and imports nothing else of the engine: the planner
// needs it without cgo.
package arch
