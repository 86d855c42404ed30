package arch

import (
	"embed"
	"fmt"
)

// The release's configs, as MiniMaxAI/MiniMax-H3 ships them (shared H3
// facts §1, §4, §7), for profiles of a snapshot that is not on disk and for
// release-size synthetic benchmarks and long tests. audio_vae.json carries
// no latent statistics: the project has not got the release's, so the
// release audio VAE sizes and plans but cannot whiten latents.
//
//go:embed release/*.json
var releaseFiles embed.FS

func releaseFile(name string) []byte {
	b, err := releaseFiles.ReadFile("release/" + name)
	if err != nil {
		panic("arch: embedded release file missing: " + name) // a build defect, not input
	}
	return b
}

// ReleaseDiTJSON is the release's transformer/config.json.
func ReleaseDiTJSON() []byte { return releaseFile("transformer.json") }

// ReleaseQwenJSON is the release's text_encoder/config.json (the keys the encoder reads).
func ReleaseQwenJSON() []byte { return releaseFile("text_encoder.json") }

// ReleaseDiT is the release's DiT config.
func ReleaseDiT() (*DiT, error) { return ParseDiT(ReleaseDiTJSON()) }

// ReleaseQwen is the release's text encoder config.
func ReleaseQwen() (Qwen, error) { return ParseQwen(ReleaseQwenJSON()) }

// ReleaseVideoVAE is the release's video VAE config.
func ReleaseVideoVAE() (*VideoVAE, error) {
	return ParseVideoVAE(releaseFile("video_vae.json"), releaseFile("video_vae_source.json"))
}

// ReleaseAudioVAE is the release's audio VAE network; its latent
// statistics are empty (see the release files).
func ReleaseAudioVAE() (*AudioVAE, error) {
	return parseAudioVAE(releaseFile("audio_vae.json"), releaseFile("audio_vae_metadata.json"), false)
}

// Release is the whole release model.
func Release() (*Model, error) {
	m := &Model{}
	var err error
	if m.DiT, err = ReleaseDiT(); err != nil {
		return nil, fmt.Errorf("arch: release: %w", err)
	}
	q, err := ReleaseQwen()
	if err != nil {
		return nil, fmt.Errorf("arch: release: %w", err)
	}
	m.Qwen = &q
	if m.VideoVAE, err = ReleaseVideoVAE(); err != nil {
		return nil, fmt.Errorf("arch: release: %w", err)
	}
	if m.AudioVAE, err = ReleaseAudioVAE(); err != nil {
		return nil, fmt.Errorf("arch: release: %w", err)
	}
	return m, nil
}
