package arch

import (
	"fmt"
	"os"
	"path/filepath"
)

// Model is one partition's four configs, parsed once per snapshot and
// handed to the loaders and the planner.
type Model struct {
	DiT      *DiT
	Qwen     *Qwen
	VideoVAE *VideoVAE
	AudioVAE *AudioVAE
	// Assumed names the components whose config the snapshot does not
	// carry (single-file trees), for which the release's stands in.
	Assumed []string
}

// Files are a partition's config files; an empty path means the snapshot
// has none for that component.
type Files struct {
	// DiT is transformer/config.json.
	DiT string
	// Qwen is text_encoder/config.json.
	Qwen string
	// VideoVAE is video_vae/source/config.json; the wrapper is
	// video_vae/config.json, two folders up.
	VideoVAE string
	// AudioVAE is audio_vae/config.json; metadata.json sits beside it.
	AudioVAE string
}

// ReadModel parses the configs f names. A component without a file takes
// the release's config and is listed in Model.Assumed; a file that is
// present but wrong is an error.
func ReadModel(f Files) (*Model, error) {
	m := &Model{}
	steps := []struct {
		name, path string
		read       func(path string) error
		assume     func(release *Model)
	}{
		{"transformer", f.DiT,
			func(p string) (err error) { m.DiT, err = readWith(p, ParseDiT); return err },
			func(r *Model) { m.DiT = r.DiT }},
		{"text_encoder", f.Qwen,
			func(p string) error { q, err := readWith(p, ParseQwen); m.Qwen = &q; return err },
			func(r *Model) { m.Qwen = r.Qwen }},
		{"video_vae", f.VideoVAE,
			func(p string) (err error) { m.VideoVAE, err = ReadVideoVAE(p); return err },
			func(r *Model) { m.VideoVAE = r.VideoVAE }},
		{"audio_vae", f.AudioVAE,
			func(p string) (err error) { m.AudioVAE, err = ReadAudioVAE(p); return err },
			func(r *Model) { m.AudioVAE = r.AudioVAE }},
	}
	var rel *Model // parsed only when a component needs it
	for _, s := range steps {
		if s.path != "" {
			if err := s.read(s.path); err != nil {
				return nil, err
			}
			continue
		}
		if rel == nil {
			var err error
			if rel, err = Release(); err != nil {
				return nil, err
			}
		}
		s.assume(rel)
		m.Assumed = append(m.Assumed, s.name)
	}
	return m, nil
}

func readWith[T any](path string, parse func([]byte) (T, error)) (T, error) {
	var zero T
	data, err := os.ReadFile(path)
	if err != nil {
		return zero, fmt.Errorf("arch: %w", err)
	}
	v, err := parse(data)
	if err != nil {
		return zero, fmt.Errorf("%w (in %s)", err, path)
	}
	return v, nil
}

// ReadVideoVAE reads the two config files of a video_vae folder given the
// path of its source/config.json.
func ReadVideoVAE(sourceConfig string) (*VideoVAE, error) {
	src, err := os.ReadFile(sourceConfig)
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	wr, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(sourceConfig)), "config.json"))
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	return ParseVideoVAE(wr, src)
}

// ReadAudioVAE reads config.json and metadata.json of an audio_vae folder
// given the path of its config.json.
func ReadAudioVAE(config string) (*AudioVAE, error) {
	cj, err := os.ReadFile(config)
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	meta, err := os.ReadFile(filepath.Join(filepath.Dir(config), "metadata.json"))
	if err != nil {
		return nil, fmt.Errorf("vae: %w", err)
	}
	return ParseAudioVAE(cj, meta)
}

// OfficialFiles are the config paths of an official partition folder
// (FL2VA/ or Ref2VA/), each kept only when the file exists.
func OfficialFiles(dir string) Files {
	have := func(rel string) string {
		p := filepath.Join(dir, rel)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
		return ""
	}
	return Files{
		DiT: have("transformer/config.json"), Qwen: have("text_encoder/config.json"),
		VideoVAE: have("video_vae/source/config.json"), AudioVAE: have("audio_vae/config.json"),
	}
}
