// Package media turns what creators drag into H3 Studio (stills, clips,
// soundtracks) into the pixels and samples the engine consumes, and turns
// the engine's RGB frames and 32 kHz stereo waveform back into an MP4 the
// timeline can scrub.
//
// Stills are decoded in Go (PNG, JPEG with EXIF orientation, WebP, GIF,
// BMP, TIFF; github.com/disintegration/imaging turns them upright) and
// resized with package resample's Pillow-exact Lanczos, the resampler of
// the official MiniMax-H3 pipeline.
// Everything time-based goes through FFmpeg and FFprobe run as child
// processes, the way every peer H3 front end does: each child gets an argv
// (never a shell), its own process group, a wall-clock limit, inputs
// restricted to local files and a fixed set of demuxers, and its stderr is
// folded into a one-line error.
//
// Binaries come from an explicit Tools value (the app fills it from its
// settings); with empty paths they are looked up on PATH. The package-level
// functions use the Tools installed with SetDefault.
//
// Media imports no engine package and no cgo.
package media
