package ui

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"h3studio/media"
)

// ceilSample is the reference for sampleOfFrame: ceil(i * 32000 / fps)
// in exact rational arithmetic, fps given as a fraction.
func ceilSample(i int, fpsNum, fpsDen int64) int64 {
	q := new(big.Rat).SetFrac(big.NewInt(int64(i)*media.SampleRate*fpsDen), big.NewInt(fpsNum))
	n := new(big.Int).Quo(q.Num(), q.Denom())
	if !q.IsInt() {
		n.Add(n, big.NewInt(1))
	}
	return n.Int64()
}

// A frame's first sample, and the frame a sample shows, agree at every
// frame boundary, including the fractional ones (24 fps is 1333 1/3
// samples a frame) and NTSC rates.
func TestFrameSampleMapping(t *testing.T) {
	hand := []struct {
		fps   float64
		frame int
		want  int64
	}{
		{24, 0, 0}, {24, 1, 1334}, {24, 2, 2667}, {24, 3, 4000}, {24, 48, 64000}, {24, 361, 481334},
		{25, 1, 1280}, {30, 1, 1067}, {23.976, 1, 1335}, {29.97, 1, 1068},
		{0, 1, 1334}, // no rate: the time code's 24 fps
	}
	for _, c := range hand {
		if got := sampleOfFrame(c.frame, c.fps); got != c.want {
			t.Errorf("sampleOfFrame(%d, %v) = %d, want %d", c.frame, c.fps, got, c.want)
		}
	}
	rates := []struct {
		fps      float64
		num, den int64
	}{{24, 24, 1}, {25, 25, 1}, {30, 30, 1}, {60, 60, 1}, {23.976, 24000, 1001}, {29.97, 30000, 1001}}
	for _, r := range rates {
		for i := range 2000 {
			s := sampleOfFrame(i, r.fps)
			if want := ceilSample(i, r.num, r.den); s != want {
				t.Fatalf("%v fps: frame %d starts at sample %d, want %d", r.fps, i, s, want)
			}
			next := sampleOfFrame(i+1, r.fps)
			if f := frameOfSample(s, r.fps); f != i {
				t.Fatalf("%v fps: sample %d (first of frame %d) maps to frame %d", r.fps, s, i, f)
			}
			if f := frameOfSample(next-1, r.fps); f != i {
				t.Fatalf("%v fps: sample %d (last of frame %d) maps to frame %d", r.fps, next-1, i, f)
			}
		}
	}
}

// The sample heard after some samples of a play: straight to the clip's
// end, or wrapping inside the in/out loop (frames 10-14 at 24 fps are
// samples 13334 to 19999).
func TestSpanPosition(t *testing.T) {
	const lo, hi, stop = 13334, 20000, 64000
	cases := []struct {
		r      span
		played int64
		want   int64
	}{
		{span{from: 4000, stop: stop}, 0, 4000},
		{span{from: 4000, stop: stop}, 1000, 5000},
		{span{from: 4000, stop: stop}, 60000, 64000},
		{span{from: 4000, stop: stop}, 90000, 64000},
		{span{from: 16000, stop: stop, lo: lo, hi: hi}, 3999, 19999},
		{span{from: 16000, stop: stop, lo: lo, hi: hi}, 4000, 13334},
		{span{from: 16000, stop: stop, lo: lo, hi: hi}, 4000 + 6666, 13334},
		{span{from: 16000, stop: stop, lo: lo, hi: hi}, 4000 + 3*6666 + 5, 13339},
		// Starting outside the loop plays on to the end.
		{span{from: 30000, stop: stop, lo: lo, hi: hi}, 10000, 40000},
		{span{from: 30000, stop: stop, lo: lo, hi: hi}, 40000, 64000},
	}
	for _, c := range cases {
		if got := c.r.position(c.played); got != c.want {
			t.Errorf("%+v after %d samples: at %d, want %d", c.r, c.played, got, c.want)
		}
	}
}

// rampPCM is n stereo samples whose left channel holds the sample's own
// index and right its negation, so any byte read says where it came from.
func rampPCM(n int) media.PCM {
	p := media.PCM{Rate: media.SampleRate, Channels: 2, Samples: make([]float32, 2*n)}
	for i := range n {
		p.Samples[2*i], p.Samples[2*i+1] = float32(i), -float32(i)
	}
	return p
}

func readerOf(p media.PCM) *clipReader { return &clipReader{pcm: pcmBytes(p)} }

// The reader serves the soundtrack from a frame's first sample, wraps at
// the loop's end back to its start, pads a short soundtrack with silence
// to the clip's end and then ends; chunk sizes that split a sample are cut
// to whole samples.
func TestClipReader(t *testing.T) {
	const decoded = 5000 // the soundtrack ends before the picture
	read := func(r *clipReader, chunk, limit int) (got []int64, err error) {
		buf := make([]byte, chunk)
		for len(got) < limit {
			n, err := r.Read(buf)
			if n%bytesPerSample != 0 {
				return got, fmt.Errorf("read %d bytes, not whole samples", n)
			}
			for i := 0; i < n; i += bytesPerSample {
				l := math.Float32frombits(binary.LittleEndian.Uint32(buf[i:]))
				rr := math.Float32frombits(binary.LittleEndian.Uint32(buf[i+4:]))
				if l != -rr {
					return got, fmt.Errorf("sample %d: channels %v, %v", len(got), l, rr)
				}
				got = append(got, int64(l))
			}
			if err == io.EOF {
				return got, nil
			}
			if err != nil {
				return got, err
			}
		}
		return got, nil
	}
	r := readerOf(rampPCM(decoded))
	// Straight play from sample 4000 to a 6000-sample clip: 4000..4999,
	// then 1000 samples of silence, then EOF.
	r.setSpan(span{from: 4000, stop: 6000})
	if _, err := r.Seek(4000*bytesPerSample, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err := read(r, 1001, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2000 {
		t.Fatalf("read %d samples from 4000 to 6000", len(got))
	}
	for i, v := range got {
		want := int64(4000 + i)
		if want >= decoded {
			want = 0
		}
		if v != want {
			t.Fatalf("sample %d of the play is %d, want %d", i, v, want)
		}
	}
	if r.servedBytes() != 2000*bytesPerSample {
		t.Errorf("served %d bytes, want %d", r.servedBytes(), 2000*bytesPerSample)
	}
	// A loop over samples 1334..3999 started at 3000.
	r.setSpan(span{from: 3000, stop: 6000, lo: 1334, hi: 4000})
	if _, err := r.Seek(3000*bytesPerSample, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	got, err = read(r, 4096, 10000)
	if err != nil {
		t.Fatal(err)
	}
	want := int64(3000)
	for i, v := range got {
		if v != want {
			t.Fatalf("looped sample %d is %d, want %d", i, v, want)
		}
		if want++; want == 4000 {
			want = 1334
		}
	}
	if _, err := r.Seek(7, io.SeekStart); err == nil {
		t.Error("seeking into the middle of a sample is accepted")
	}
}

// encodeClip writes n numbered frames with pcm as the soundtrack (none
// when empty) and returns the MP4's path and its frame store.
func encodeClip(t testing.TB, n, w, h int, pcm media.PCM) (string, *media.FrameStore) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "clip.mp4")
	opt := media.EncodeOptions{Width: w, Height: h, Preset: "ultrafast", Audio: pcm}
	if err := media.EncodeMP4(t.Context(), path, opt, numberedFrames(n, w, h)); err != nil {
		t.Fatal(err)
	}
	st, err := media.LoadFrames(t.Context(), path, media.FrameStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return path, st
}

// sine is seconds of a 440 Hz stereo tone at 32 kHz.
func sine(seconds float64) media.PCM {
	n := int(seconds * media.SampleRate)
	p := media.PCM{Rate: media.SampleRate, Channels: 2, Samples: make([]float32, 2*n)}
	for i := range n {
		v := float32(0.5 * math.Sin(2*math.Pi*440*float64(i)/media.SampleRate))
		p.Samples[2*i], p.Samples[2*i+1] = v, v
	}
	return p
}

// waitEnd waits for playback to stop at frame want.
func waitEnd(t *testing.T, ui *serial, tl *Timeline, want int, during func()) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var idx, speed int
		ui.DoAndWait(func() {
			idx, speed = tl.Index(), tl.Speed()
			if during != nil && speed != 0 {
				during()
			}
		})
		if idx == want && speed == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("playback at frame %d, speed %d after 5 s; want it stopped at %d", idx, speed, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// A clip without an audio stream loads a silent Sound and plays its
// picture to the end on the wall clock, saying nothing about audio.
func TestSilentClipPlaysVideo(t *testing.T) {
	path, st := encodeClip(t, 48, 320, 240, media.PCM{})
	snd, err := LoadSound(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if !snd.Silent() || snd.DeviceErr() != nil {
		t.Fatalf("clip without sound: silent %v, device error %v", snd.Silent(), snd.DeviceErr())
	}
	ui := newSerial(t)
	tl, _ := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		tl.SetSound(snd)
		tl.Seek(40)
		tl.TogglePlay()
	})
	waitEnd(t, ui, tl, 47, nil)
	ui.DoAndWait(func() {
		if snd.player != nil || strings.Contains(tl.code.Text, "audio") {
			t.Errorf("silent clip: player %v, time code %q", snd.player, tl.code.Text)
		}
	})
}

// Without a device a clip's sound is skipped: the time code says so and
// the picture plays on the wall clock as if the clip were silent.
func TestNoAudioDevicePlaysVideo(t *testing.T) {
	_, st := encodeClip(t, 48, 320, 240, media.PCM{})
	// What newSound makes when openDevice fails.
	snd := &Sound{reader: readerOf(sine(2)), devErr: fmt.Errorf("%w: oto: ALSA error at snd_pcm_open: no such device", ErrNoAudioDevice)}
	ui := newSerial(t)
	tl, _ := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		tl.SetSound(snd)
		if !strings.HasSuffix(tl.code.Text, "\nno audio device") {
			t.Errorf("time code %q does not say there is no audio device", tl.code.Text)
		}
		tl.Seek(40)
		tl.TogglePlay()
	})
	waitEnd(t, ui, tl, 47, nil)
	ui.DoAndWait(func() {
		if snd.player != nil || strings.Count(tl.code.Text, "no audio device") != 1 {
			t.Errorf("after playing: player %v, time code %q", snd.player, tl.code.Text)
		}
	})
}

// nullALSA points ALSA at its null device (it accepts samples and plays
// nothing) for this process, so oto can open a context without a sound
// card.
func nullALSA(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "asoundrc")
	if err := os.WriteFile(conf, []byte("pcm.!default { type null }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ALSA_CONFIG_PATH", conf)
}

// On a real oto context (ALSA's null device) 1x playback follows the
// audio clock: the frame shown is the frame being heard, the sound starts
// at the playhead's own sample, other speeds are muted, a scrub moves the
// sound with the picture, and the in/out loop wraps the sound too.
func TestSoundFollowsTimeline(t *testing.T) {
	nullALSA(t)
	path, st := encodeClip(t, 48, 320, 240, sine(2))
	snd, err := LoadSound(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	if errors.Is(snd.DeviceErr(), ErrNoAudioDevice) {
		t.Skipf("oto cannot open ALSA's null device in this environment (or another test opened the process's one context first): %v", snd.DeviceErr())
	}
	if snd.Silent() || len(snd.reader.pcm) < 60000*bytesPerSample {
		t.Fatalf("sound: silent %v, %d bytes decoded", snd.Silent(), len(snd.reader.pcm))
	}
	ui := newSerial(t)
	tl, _ := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		tl.SetSound(snd)
		tl.Seek(3)
		tl.TogglePlay()
		if r := snd.reader.span; r.from != sampleOfFrame(3, 24) || r.stop != 64000 || r.looping() {
			t.Errorf("play from frame 3: span %+v, want from %d to 64000", r, sampleOfFrame(3, 24))
		}
	})
	checkAudioClock(t, ui, tl, snd, st.FPS())
	checkShuttleAndScrub(t, ui, tl, snd)
	checkLoopWrap(t, ui, tl, snd)
}

// checkAudioClock plays to the end and checks the picture follows the
// sound: the playback clock lies between the frames heard around it.
func checkAudioClock(t *testing.T, ui *serial, tl *Timeline, snd *Sound, fps float64) {
	t.Helper()
	heard := func() int {
		played := (snd.reader.servedBytes() - int64(snd.player.BufferedSize())) / bytesPerSample
		snd.reader.mu.Lock()
		r := snd.reader.span
		snd.reader.mu.Unlock()
		return frameOfSample(r.position(max(played, 0)), fps)
	}
	t0 := time.Now()
	// The playback clock is the audio clock: the frame it gives lies
	// between the frames heard just before and just after asking, give or
	// take oto's staging buffer (playerBuffer: 2048 samples, under two
	// frame boundaries). The null device is not real time, so the frame on
	// screen, set a tick earlier, is not compared.
	var worst, checks int
	waitEnd(t, ui, tl, 47, func() {
		before := heard()
		f, _ := tl.head(time.Now())
		after := heard()
		if f < before-2 || f > after+2 {
			t.Errorf("playback clock at frame %d while frames %d..%d are heard", f, before, after)
		} else {
			worst = max(worst, abs(f-before), abs(f-after))
		}
		checks++
	})
	t.Logf("playback clock within %d frames of the audio over %d checks; 45 frames played in %v", worst, checks, time.Since(t0).Round(time.Millisecond))
	if checks == 0 {
		t.Error("playback ended before the clock could be checked")
	}
	// ALSA's null sink takes samples faster than real time (100x here), so
	// a picture on the audio clock ends well before the 1.875 s that 45
	// frames take on the wall clock.
	if d := time.Since(t0); d > 1500*time.Millisecond {
		t.Errorf("45 frames took %v with the null sink's clock: the picture is not following the audio", d)
	}
}

// checkShuttleAndScrub: 1x plays sound, 2x mutes it, and a scrub while
// playing moves the sound with the picture.
func checkShuttleAndScrub(t *testing.T, ui *serial, tl *Timeline, snd *Sound) {
	t.Helper()
	ui.DoAndWait(func() {
		if snd.player.IsPlaying() {
			t.Error("sound still playing after the clip ended")
		}
		// L twice is 2x: the sound is muted, as in editors.
		tl.Seek(0)
		tl.Shuttle(1)
		if !snd.player.IsPlaying() {
			t.Error("1x shuttle plays no sound")
		}
		tl.Shuttle(1)
		if tl.Speed() != 2 || snd.player.IsPlaying() {
			t.Errorf("speed %d: sound playing %v", tl.Speed(), snd.player.IsPlaying())
		}
		tl.Pause()
		// A scrub during 1x playback moves the sound with the picture.
		tl.Seek(2)
		tl.TogglePlay()
		tl.slider.SetValue(20)
		if r := snd.reader.span; r.from != sampleOfFrame(20, 24) || !snd.player.IsPlaying() {
			t.Errorf("scrub to 20 while playing: span %+v (want from %d), playing %v", r, sampleOfFrame(20, 24), snd.player.IsPlaying())
		}
	})
	waitEnd(t, ui, tl, 47, func() {
		if tl.Index() < 20 {
			t.Errorf("after the scrub to 20 playback showed frame %d", tl.Index())
		}
	})
}

// checkLoopWrap: the loop 10-14 wraps the sound and the picture together.
func checkLoopWrap(t *testing.T, ui *serial, tl *Timeline, snd *Sound) {
	t.Helper()
	ui.DoAndWait(func() {
		tl.Seek(10)
		tl.SetIn()
		tl.Seek(14)
		tl.SetOut()
		tl.Seek(12)
		tl.TogglePlay()
		r := snd.reader.span
		if !r.looping() || r.lo != sampleOfFrame(10, 24) || r.hi != sampleOfFrame(15, 24) {
			t.Errorf("loop 10-14: span %+v", r)
		}
	})
	seen := map[int]bool{}
	for end := time.Now().Add(800 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		ui.DoAndWait(func() {
			seen[tl.Index()] = true
			snd.reader.mu.Lock()
			pos := snd.reader.pos / bytesPerSample
			snd.reader.mu.Unlock()
			if pos < sampleOfFrame(10, 24) || pos > sampleOfFrame(15, 24) {
				t.Errorf("looped sound read sample %d, outside frames 10-14", pos)
			}
		})
	}
	ui.DoAndWait(func() { tl.Pause() })
	for i := range seen {
		if i < 10 || i > 14 {
			t.Errorf("looped playback showed frame %d outside 10-14", i)
		}
	}
	if !seen[10] || !seen[14] {
		t.Errorf("0.8 s of looped playback should wrap through 10..14: saw %v", seen)
	}
}
