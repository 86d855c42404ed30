package media

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestAudioResampleMono44k decodes a mono 44.1 kHz sine (made by FFmpeg's
// expression source) and checks every 32 kHz stereo sample against the
// sine's closed form: both channels at full level, same phase.
func TestAudioResampleMono44k(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "mono.wav")
	const amp, hz = 0.5, 1000.0
	ffmpegGen(t, "-f", "lavfi", "-i", "aevalsrc=0.5*sin(2*PI*1000*t):s=44100:c=mono", "-t", "2", "-c:a", "pcm_f32le", src)
	cases := []struct {
		opt    AudioOptions
		frames int
	}{
		{AudioOptions{}, 2 * SampleRate},
		{AudioOptions{Start: 250e6, MaxDuration: 500e6}, SampleRate / 2},
	}
	for _, c := range cases {
		pcm, err := tools.DecodeAudio(testCtx(t), src, c.opt)
		if err != nil {
			t.Fatal(err)
		}
		if pcm.Rate != SampleRate || pcm.Channels != Channels {
			t.Fatalf("got %d Hz %d ch", pcm.Rate, pcm.Channels)
		}
		if d := pcm.Frames() - c.frames; d < -1 || d > 1 {
			t.Errorf("%+v: %d frames, want %d", c.opt, pcm.Frames(), c.frames)
		}
		// The resampler's filter rings at the cut edges; judge the middle.
		const edge = 64
		var worst float64
		for n := edge; n < pcm.Frames()-edge; n++ {
			tt := c.opt.Start.Seconds() + float64(n)/SampleRate
			// FFmpeg's -ac 2 spreads mono over both channels at -3 dB, as
			// the official pipeline's extraction does.
			want := amp / math.Sqrt2 * math.Sin(2*math.Pi*hz*tt)
			l, r := float64(pcm.Samples[2*n]), float64(pcm.Samples[2*n+1])
			if l != r {
				t.Fatalf("frame %d: left %g != right %g; mono must be duplicated", n, l, r)
			}
			worst = math.Max(worst, math.Abs(l-want))
		}
		if worst > 2e-3 {
			t.Errorf("%+v: worst deviation from the sine %.2e, want <= 2e-3", c.opt, worst)
		}
		t.Logf("%+v: %d frames, worst deviation %.2e", c.opt, pcm.Frames(), worst)
	}
}

func TestAudioFromVideo(t *testing.T) {
	tools := testTools(t)
	dir := t.TempDir()
	va := clip(t, dir, "va.mp4", 64, 64, 24, 1.5, 48000)
	pcm, err := tools.DecodeAudio(testCtx(t), va, AudioOptions{MaxDuration: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	if pcm.Frames() != SampleRate {
		t.Errorf("embedded audio: %d frames, want %d (1 s cap)", pcm.Frames(), SampleRate)
	}
	// lavfi's sine source is 1/8 of full scale: RMS 0.125/sqrt(2), which
	// AAC keeps to a few percent; the mono track reaches each channel at
	// -3 dB (FFmpeg's -ac 2 upmix, the official extraction).
	var sum float64
	for _, s := range pcm.Samples {
		sum += float64(s) * float64(s)
	}
	want := 0.125 / math.Sqrt2 / math.Sqrt2
	if rms := math.Sqrt(sum / float64(len(pcm.Samples))); math.Abs(rms-want) > 0.05*want {
		t.Errorf("embedded audio RMS %.4f, want %.4f", rms, want)
	}
	silent := clip(t, dir, "v.mp4", 64, 64, 24, 1, 0)
	if _, err := tools.DecodeAudio(testCtx(t), silent, AudioOptions{}); err == nil || !strings.Contains(err.Error(), "no audio stream") {
		t.Errorf("video without audio: got %v", err)
	}
}
