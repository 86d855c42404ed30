// Command media-bench (make bench) measures media's two hot paths against
// the FFmpeg CLI doing the same work alone, in the same run: decoding a
// generated 1080x1920 clip to the 768x1344 canvas at 24 fps (Lanczos,
// rgb24 frames delivered to Go), and encoding 768x1344 RGB frames plus a
// 32 kHz stereo soundtrack to H.264 + AAC MP4 through media's concurrent
// pipes. Ratios are media's time over the CLI's (target <= 1.2x), both
// in wall time and in CPU time (this process plus its children, which
// stays meaningful when the machine is shared). Each figure is the best
// of several alternating runs.
package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"h3studio/media"
)

const (
	srcW, srcH  = 1080, 1920
	srcFPS      = 30
	srcSeconds  = 5
	canvasW     = 768
	canvasH     = 1344
	encFrames   = 72 // 3 s of H3 output
	loopFrames  = 24 // distinct frames, cycled
	repetitions = 2
	// audioSeconds is the length of the audio bench track.
	audioSeconds = 60
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "media-bench:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx := context.Background()
	tools := &media.Tools{}
	caps, err := tools.Discover(ctx)
	if err != nil {
		return err
	}
	if err := caps.Usable(); err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "media-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "src.mp4")
	if err := ffmpeg("-f", "lavfi", "-i", fmt.Sprintf("testsrc2=size=%dx%d:rate=%d", srcW, srcH, srcFPS),
		"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-t", strconv.Itoa(srcSeconds),
		"-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-c:a", "aac", src); err != nil {
		return err
	}
	fmt.Printf("media bench: ffmpeg %s, %s + aac; best of %d alternating runs; ratios = media time / ffmpeg CLI alone\n",
		caps.FFmpegVersion, caps.H264Encoder, repetitions)
	fmt.Printf("%-52s %10s %10s %7s %7s\n", "", "media", "ffmpeg CLI", "wall", "CPU")

	frames, err := benchDecode(ctx, tools, src)
	if err != nil {
		return err
	}
	if err := benchEncode(ctx, tools, dir, frames); err != nil {
		return err
	}
	return benchAudio(ctx, tools, dir)
}

// benchDecode times media.DecodeVideo against the CLI running the same
// filter chain (24 fps, centred cover crop, Lanczos, rgb24) to /dev/null.
// It returns loopFrames decoded frames for the encode bench.
func benchDecode(ctx context.Context, tools *media.Tools, src string) ([]media.Frame, error) {
	var kept []media.Frame
	ours := func() (int, error) {
		return tools.DecodeVideo(ctx, src, media.VideoOptions{Width: canvasW, Height: canvasH, Policy: media.Cover},
			func(i int, f media.Frame) error {
				if len(kept) < loopFrames {
					kept = append(kept, media.Frame{Width: f.Width, Height: f.Height, Pix: append([]byte(nil), f.Pix...)})
				}
				return nil
			})
	}
	// 1080x1920 covering 768x1344 keeps the centred 1080x1890.
	vf := fmt.Sprintf("fps=24,crop=1080:1890:0:15:exact=1,scale=%d:%d:flags=lanczos+accurate_rnd,setsar=1,format=rgb24", canvasW, canvasH)
	cli := func() error {
		return ffmpeg("-i", src, "-map", "0:v:0", "-an", "-vf", vf, "-f", "rawvideo", "-pix_fmt", "rgb24", "/dev/null")
	}
	var n int
	tm, tc, err := alternate(func() error {
		var err error
		n, err = ours()
		return err
	}, cli)
	if err != nil {
		return nil, err
	}
	report(fmt.Sprintf("decode+resample %dx%d -> %dx%d, frames/s", srcW, srcH, canvasW, canvasH), float64(n), tm, tc)
	return kept, nil
}

// benchEncode times media.CreateMP4 fed from memory against the CLI
// encoding the same frames and soundtrack from raw files.
func benchEncode(ctx context.Context, tools *media.Tools, dir string, frames []media.Frame) error {
	if len(frames) == 0 {
		return errors.New("no frames decoded")
	}
	audio := sine(float64(encFrames) / media.FPS)
	rawV, rawA := filepath.Join(dir, "frames.rgb"), filepath.Join(dir, "audio.f32")
	var pix []byte
	for _, f := range frames {
		pix = append(pix, f.Pix...)
	}
	if err := os.WriteFile(rawV, pix, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(rawA, float32LE(audio.Samples), 0o644); err != nil {
		return err
	}
	ours := func() error {
		w, err := tools.CreateMP4(ctx, filepath.Join(dir, "ours.mp4"), media.EncodeOptions{Width: canvasW, Height: canvasH, Audio: audio})
		if err != nil {
			return err
		}
		for i := 0; i < encFrames; i++ {
			if err := w.WriteFrame(frames[i%len(frames)]); err != nil {
				w.Abort()
				return err
			}
		}
		return w.Close()
	}
	loops := strconv.Itoa(encFrames/len(frames) - 1)
	cli := func() error {
		return ffmpeg("-f", "rawvideo", "-pix_fmt", "rgb24", "-s", fmt.Sprintf("%dx%d", canvasW, canvasH), "-framerate", "24",
			"-stream_loop", loops, "-i", rawV, "-f", "f32le", "-ar", "32000", "-ac", "2", "-i", rawA,
			"-map", "0:v:0", "-map", "1:a:0", "-c:a", "aac", "-b:a", "192k",
			"-c:v", "libx264", "-pix_fmt", "yuv420p", "-preset", "medium", "-crf", "18",
			"-movflags", "+faststart", "-frames:v", strconv.Itoa(encFrames), filepath.Join(dir, "cli.mp4"))
	}
	tm, tc, err := alternate(ours, cli)
	if err != nil {
		return err
	}
	report(fmt.Sprintf("encode %dx%d H.264+AAC, frames/s", canvasW, canvasH), encFrames, tm, tc)
	return nil
}

// benchAudio times media.DecodeAudio (44.1 kHz mono AAC to 32 kHz stereo
// float) against the same conversion by the CLI. The track is a minute
// long so that media's probe, a fixed cost per file, does not dominate.
func benchAudio(ctx context.Context, tools *media.Tools, dir string) error {
	src := filepath.Join(dir, "song.m4a")
	if err := ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:sample_rate=44100", "-t", strconv.Itoa(audioSeconds), "-c:a", "aac", src); err != nil {
		return err
	}
	ours := func() error {
		_, err := tools.DecodeAudio(ctx, src, media.AudioOptions{})
		return err
	}
	cli := func() error {
		return ffmpeg("-i", src, "-map", "0:a:0", "-af", "pan=stereo|c0=c0|c1=c0", "-ar", "32000", "-f", "f32le", "/dev/null")
	}
	tm, tc, err := alternate(ours, cli)
	if err != nil {
		return err
	}
	report("audio decode 44.1k mono AAC -> 32k stereo, x realtime", audioSeconds, tm, tc)
	return nil
}

// cost is one run's wall time and CPU time (user+system of this process
// and of its reaped children: ffprobe, ffmpeg).
type cost struct{ wall, cpu time.Duration }

// alternate runs a and b in turn, repetitions times each, and returns the
// best wall and CPU time of each.
func alternate(a, b func() error) (cost, cost, error) {
	inf := time.Duration(math.MaxInt64)
	ca, cb := cost{inf, inf}, cost{inf, inf}
	for r := 0; r < repetitions; r++ {
		for _, x := range []struct {
			fn   func() error
			best *cost
		}{{a, &ca}, {b, &cb}} {
			cpu0, start := cpuTime(), time.Now()
			if err := x.fn(); err != nil {
				return ca, cb, err
			}
			x.best.wall = min(x.best.wall, time.Since(start))
			x.best.cpu = min(x.best.cpu, cpuTime()-cpu0)
		}
	}
	return ca, cb, nil
}

func cpuTime() time.Duration {
	var total time.Duration
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if err := syscall.Getrusage(who, &ru); err == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return total
}

func report(name string, units float64, ours, cli cost) {
	fmt.Printf("%-52s %10.1f %10.1f %6.2fx %6.2fx\n", name, units/ours.wall.Seconds(), units/cli.wall.Seconds(),
		ours.wall.Seconds()/cli.wall.Seconds(), ours.cpu.Seconds()/cli.cpu.Seconds())
}

func ffmpeg(args ...string) error {
	full := append([]string{"-nostdin", "-hide_banner", "-v", "error", "-y"}, args...)
	out, err := exec.Command("ffmpeg", full...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ffmpeg: %v: %s", err, out)
	}
	return nil
}

func sine(seconds float64) media.PCM {
	n := int(seconds * media.SampleRate)
	p := media.PCM{Rate: media.SampleRate, Channels: media.Channels, Samples: make([]float32, 2*n)}
	for i := 0; i < n; i++ {
		v := float32(0.3 * math.Sin(2*math.Pi*440*float64(i)/media.SampleRate))
		p.Samples[2*i], p.Samples[2*i+1] = v, v
	}
	return p
}

func float32LE(s []float32) []byte {
	b := make([]byte, 4*len(s))
	for i, v := range s {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}
