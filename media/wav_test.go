package media

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// ffmpegF32 decodes a file with the FFmpeg CLI to interleaved float32 at
// its own rate and channel count: the reference for ReadWAV and WriteWAV.
func ffmpegF32(t *testing.T, path string) []float32 {
	t.Helper()
	out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "f32le", "-c:a", "pcm_f32le", "-").Output()
	if err != nil {
		t.Fatalf("ffmpeg decode %s: %v", path, err)
	}
	return float32sLE(out)
}

func TestWriteWAVReadByFFmpeg(t *testing.T) {
	testTools(t)
	dir := t.TempDir()
	pcm := stereoSine(4000, 300, 700)
	pcm.Samples[11] = -1
	path := filepath.Join(dir, "out.wav")
	if err := WriteWAV(path, pcm); err != nil {
		t.Fatal(err)
	}
	if got := dirEntries(t, dir); len(got) != 1 {
		t.Errorf("folder holds %v, want only out.wav", got)
	}
	info, err := testTools(t).Probe(testCtx(t), path)
	if err != nil || info.AudioRate != SampleRate || info.AudioChannels != 2 {
		t.Fatalf("probe: %+v %v", info, err)
	}
	got := ffmpegF32(t, path)
	if len(got) != len(pcm.Samples) {
		t.Fatalf("ffmpeg read %d samples, want %d", len(got), len(pcm.Samples))
	}
	for i := range got {
		if got[i] != pcm.Samples[i] {
			t.Fatalf("sample %d: ffmpeg read %g, wrote %g", i, got[i], pcm.Samples[i])
		}
	}
	back, err := ReadWAV(path)
	if err != nil || back.Rate != pcm.Rate || back.Channels != 2 || len(back.Samples) != len(pcm.Samples) {
		t.Fatalf("ReadWAV: %v, %d Hz %d ch %d samples", err, back.Rate, back.Channels, len(back.Samples))
	}
}

func TestReadWAVEncodings(t *testing.T) {
	testTools(t)
	dir := t.TempDir()
	for _, codec := range []string{"pcm_u8", "pcm_s16le", "pcm_s24le", "pcm_s32le", "pcm_f32le", "pcm_f64le"} {
		path := filepath.Join(dir, codec+".wav")
		ffmpegGen(t, "-f", "lavfi", "-i", "aevalsrc=0.8*sin(2*PI*440*t)|0.3*sin(2*PI*50*t):s=22050", "-t", "0.3", "-c:a", codec, path)
		pcm, err := ReadWAV(path)
		if err != nil {
			t.Fatalf("%s: %v", codec, err)
		}
		want := ffmpegF32(t, path)
		if pcm.Rate != 22050 || pcm.Channels != 2 || len(pcm.Samples) != len(want) {
			t.Fatalf("%s: %d Hz %d ch %d samples, want 22050 Hz 2 ch %d", codec, pcm.Rate, pcm.Channels, len(pcm.Samples), len(want))
		}
		var worst float64
		for i := range want {
			worst = math.Max(worst, math.Abs(float64(pcm.Samples[i]-want[i])))
		}
		if worst > 1e-7 {
			t.Errorf("%s: differs from FFmpeg's decode by %.2e", codec, worst)
		}
	}
}

func TestReadWAVBad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.wav")
	if err := WriteWAV(good, stereoSine(100, 1, 1)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	huge := append([]byte(nil), data[:60]...)
	binary.LittleEndian.PutUint32(huge[16:], 0x7fffffff) // fmt chunk claims 2 GB
	cases := map[string][]byte{
		"empty":     nil,
		"text":      []byte("hello"),
		"truncated": data[:40],
		"huge":      huge,
		"no data":   data[:58],
	}
	for name, b := range cases {
		p := writeFile(t, filepath.Join(dir, name+".wav"), b)
		if _, err := ReadWAV(p); err == nil {
			t.Errorf("%s: accepted", name)
		} else if bytes.ContainsRune([]byte(err.Error()), '\n') {
			t.Errorf("%s: multi-line error", name)
		}
	}
}
