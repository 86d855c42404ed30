// Command screenshots runs the studio window on the real GLFW driver (under
// Xvfb, see run.sh), performs a render with the built-in demo model and
// captures the screen at four moments with ImageMagick's import: the empty
// window, references loaded with their plan, a render with its step
// preview, and the finished clip on the timeline. Fyne's own canvas
// capture is blank under Xvfb, so the pixels come from the X server.
package main

import (
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"h3studio/app"
	"h3studio/media"
	"h3studio/resources"
	"h3studio/ui"
)

func main() {
	out := flag.String("out", "docs/screenshots", "folder for the PNGs")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	work, err := os.MkdirTemp("", "h3studio-screenshots-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(work)

	a := fyneapp.NewWithID(ui.AppID + ".screenshots")
	a.SetIcon(resources.Icon)
	hist, err := app.OpenHistory(filepath.Join(work, "history"))
	if err != nil {
		log.Fatal(err)
	}
	rd := &app.Renderer{CacheDir: filepath.Join(work, "cache"), Preview: true}
	defer rd.Close()
	s := ui.NewStudio(a, ui.Config{
		Exec:      ui.Executor{Do: fyne.Do, DoAndWait: fyne.DoAndWait},
		Render:    rd.Render,
		Plan:      ui.PlanWith(rd),
		History:   hist,
		OutputDir: work,
		// A named profile, so the plan panel shows a Mac's budget rather
		// than this Linux machine's.
		Machine: "m5-max-128",
		// The cheap named reference sizes: the official ones (a 3072x2048
		// picture) took over ten minutes to encode on a loaded 2-core CPU,
		// and the shots show the window, not the sizing.
		RefImageSize: "match",
		RefClipSize:  "source",
		// The window's canvas, length and presets follow the model, as
		// the app's own wiring (ui.DefaultConfig) has them.
		Defaults: rd.Defaults,
	})
	w := s.Window()
	w.SetMaster()
	w.Resize(fyne.NewSize(1280, 800))
	failed := false
	go func() {
		if err := script(s, work, *out); err != nil {
			log.Print("screenshots: ", err)
			failed = true
		}
		fyne.Do(a.Quit)
	}()
	w.ShowAndRun()
	s.Close()
	if failed {
		os.Exit(1)
	}
}

// script drives the window through its four states.
func script(s *ui.Studio, work, out string) error {
	query := func(f func() bool) bool {
		var ok bool
		fyne.DoAndWait(func() { ok = f() })
		return ok
	}
	wait := func(what string, limit time.Duration, f func() bool) error {
		deadline := time.Now().Add(limit)
		for !query(f) {
			if time.Now().After(deadline) {
				return fmt.Errorf("timed out waiting for %s", what)
			}
			time.Sleep(50 * time.Millisecond)
		}
		return nil
	}
	if err := wait("the first plan", time.Minute, s.Settled); err != nil {
		return err
	}
	time.Sleep(time.Second) // let the window map and paint
	if err := capture(filepath.Join(out, "1-empty.png")); err != nil {
		return err
	}

	refs, err := references(work)
	if err != nil {
		return err
	}
	// The shots show the built-in demo model (the default) at its own
	// canvas, length and steps (a request's zero fields), with prompts in
	// its world's words (tools/train/world.py).
	req := app.Request{
		Prompt: "the object in Picture 1 moves right on a navy background, a low hum on the left",
		Seed:   7, References: refs,
	}
	fyne.DoAndWait(func() { s.Restore(req) })
	if err := wait("the references and their plan", time.Minute, s.Settled); err != nil {
		return err
	}
	time.Sleep(500 * time.Millisecond)
	if err := capture(filepath.Join(out, "2-references-and-plan.png")); err != nil {
		return err
	}

	// The render is text to video, the task the demo model is trained on
	// so far, so the last two shots show what it draws.
	fyne.DoAndWait(func() {
		s.Restore(app.Request{Prompt: "a yellow square moves right on a navy background, a high beep on the left", Seed: 7})
	})
	if err := wait("the text-to-video plan", time.Minute, s.Settled); err != nil {
		return err
	}
	fyne.DoAndWait(s.Render)
	if err := wait("step previews", 10*time.Minute, func() bool { return s.Previews() >= 3 }); err != nil {
		return err
	}
	if err := capture(filepath.Join(out, "3-rendering-with-preview.png")); err != nil {
		return err
	}

	if err := wait("the clip on the timeline", 5*time.Minute, func() bool { return s.Clip() != "" }); err != nil {
		return err
	}
	fyne.DoAndWait(func() { s.Timeline().Seek(11) })
	time.Sleep(500 * time.Millisecond)
	return capture(filepath.Join(out, "4-timeline.png"))
}

// capture saves the X screen (the window fills it) as a PNG.
func capture(path string) error {
	cmd := exec.Command("import", "-window", "root", path)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("import %s: %v: %s", path, err, b)
	}
	log.Print("screenshots: wrote ", path)
	return nil
}

// references writes a picture, a clip with a soundtrack and a voice-like
// audio file for the reference lists.
func references(dir string) ([]app.Reference, error) {
	still := filepath.Join(dir, "coast.png")
	img := image.NewNRGBA(image.Rect(0, 0, 960, 640))
	for y := 0; y < 640; y++ {
		for x := 0; x < 960; x++ {
			sky := float64(y) / 640
			img.SetNRGBA(x, y, color.NRGBA{uint8(250 - 120*sky), uint8(150 - 60*sky), uint8(90 + 120*sky), 255})
		}
	}
	f, err := os.Create(still)
	if err != nil {
		return nil, err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	var frames []media.Frame
	for i := 0; i < 48; i++ {
		fr := media.NewFrame(320, 240)
		for y := 0; y < 240; y++ {
			for x := 0; x < 320; x++ {
				o := 3 * (y*320 + x)
				wave := 0.5 + 0.5*math.Sin(float64(x)/20+float64(i)/4+float64(y)/40)
				fr.Pix[o], fr.Pix[o+1], fr.Pix[o+2] = byte(30+40*wave), byte(90+80*wave), byte(140+100*wave)
			}
		}
		frames = append(frames, fr)
	}
	clip := filepath.Join(dir, "waves.mp4")
	if err := media.EncodeMP4(context.Background(), clip, media.EncodeOptions{Width: 320, Height: 240, Audio: surf(2)}, frames); err != nil {
		return nil, err
	}
	voice := filepath.Join(dir, "foghorn.wav")
	if err := media.WriteWAV(voice, surf(3)); err != nil {
		return nil, err
	}
	return []app.Reference{{Kind: app.RefImage, Path: still}, {Kind: app.RefVideoAudio, Path: clip}, {Kind: app.RefAudio, Path: voice}}, nil
}

// surf is a low tone under a slow swell, so the waveform thumbnail has a
// shape.
func surf(seconds float64) media.PCM {
	n := int(seconds * media.SampleRate)
	p := media.PCM{Rate: media.SampleRate, Channels: 2, Samples: make([]float32, 2*n)}
	for i := 0; i < n; i++ {
		t := float64(i) / media.SampleRate
		v := float32(0.6 * math.Sin(2*math.Pi*0.7*t) * math.Sin(2*math.Pi*110*t))
		p.Samples[2*i], p.Samples[2*i+1] = v, v
	}
	return p
}
