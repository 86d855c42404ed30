package ui

import (
	"image"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"h3studio/media"
)

// numberedClip encodes n numbered frames to an MP4 and loads its store.
func numberedClip(t testing.TB, n, w, h int) *media.FrameStore {
	t.Helper()
	path := filepath.Join(t.TempDir(), "numbered.mp4")
	if err := media.EncodeMP4(t.Context(), path, media.EncodeOptions{Width: w, Height: h, Preset: "ultrafast"}, numberedFrames(n, w, h)); err != nil {
		t.Fatal(err)
	}
	st, err := media.LoadFrames(t.Context(), path, media.FrameStoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Len() != n {
		t.Fatalf("store has %d frames, want %d", st.Len(), n)
	}
	return st
}

// frameNumber reads back which numbered frame a picture made w pixels
// wide is, at whatever size it is shown: the column of the white bar
// (numberedFrames puts it at column 6i).
func frameNumberOf(img image.Image, w int) int {
	b := img.Bounds()
	y := b.Min.Y + b.Dy()/2
	best, bestV := -1, uint32(0)
	for x := b.Min.X; x < b.Max.X; x++ {
		r, g, bl, _ := img.At(x, y).RGBA()
		if v := r + g + bl; v > bestV {
			best, bestV = x-b.Min.X, v
		}
	}
	return best * w / b.Dx() / 6
}

func frameNumber(img image.Image) int { return frameNumberOf(img, img.Bounds().Dx()) }

func newTimelineWindow(t testing.TB, ui *serial) (*Timeline, fyne.Window) {
	var tl *Timeline
	var w fyne.Window
	ui.DoAndWait(func() {
		a := test.NewTempApp(t)
		tl = NewTimeline(ui.Do)
		w = a.NewWindow("timeline")
		w.SetContent(tl)
		w.Resize(fyne.NewSize(800, 600))
		w.Show()
	})
	return tl, w
}

// Scrubbing shows exactly the frame asked for, read back from its pixels;
// the keys work once the viewer has focus, and not while the user types.
func TestTimelineFrameAccurateAndKeys(t *testing.T) {
	ui := newSerial(t)
	st := numberedClip(t, 48, 320, 240)
	tl, w := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		for _, i := range []int{17, 0, 47, 30, 17} {
			tl.slider.SetValue(float64(i))
			if got := frameNumber(tl.Image()); tl.Index() != i || got != i {
				t.Errorf("slider %d: index %d, picture shows frame %d", i, tl.Index(), got)
			}
			if want := timecode(i, 48, 24); tl.code.Text != want {
				t.Errorf("time code %q, want %q", tl.code.Text, want)
			}
		}
		test.Tap(tl)
		if w.Canvas().Focused() != tl {
			t.Fatal("tapping the viewer does not focus it")
		}
		key := func(k fyne.KeyName) { w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: k}) }
		steps := []struct {
			key  fyne.KeyName
			want int
		}{{fyne.KeyRight, 18}, {fyne.KeyLeft, 17}, {fyne.KeyLeft, 16}, {fyne.KeyEnd, 47}, {fyne.KeyHome, 0}}
		for _, s := range steps {
			key(s.key)
			if tl.Index() != s.want || frameNumber(tl.Image()) != s.want {
				t.Errorf("%s: frame %d (picture %d), want %d", s.key, tl.Index(), frameNumber(tl.Image()), s.want)
			}
		}
		tl.KeyDown(&fyne.KeyEvent{Name: "LeftShift"})
		key(fyne.KeyRight)
		tl.KeyUp(&fyne.KeyEvent{Name: "LeftShift"})
		if tl.Index() != 24 {
			t.Errorf("Shift+Right from 0: frame %d, want 24 (one second)", tl.Index())
		}
		for _, c := range []struct {
			r     rune
			speed int
		}{{'l', 1}, {'l', 2}, {'l', 4}, {'l', 8}, {'l', 8}, {'k', 0}, {'j', -1}, {'j', -2}, {'k', 0}} {
			w.Canvas().Focused().TypedRune(c.r)
			if tl.Speed() != c.speed {
				t.Errorf("%c: speed %d, want %d", c.r, tl.Speed(), c.speed)
			}
		}
	})
	checkSpacePlays(t, ui, tl, w)
	checkLoopMarks(t, ui, tl, w)
	checkHoverStrip(t, ui, tl, w)
	checkTypingElsewhere(t, ui, tl, w)
}

// checkSpacePlays: Space plays forward in real time and stops at the last
// frame.
func checkSpacePlays(t *testing.T, ui *serial, tl *Timeline, w fyne.Window) {
	t.Helper()
	ui.DoAndWait(func() {
		tl.Seek(40)
		w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		var idx, speed int
		ui.DoAndWait(func() { idx, speed = tl.Index(), tl.Speed() })
		if idx == 47 && speed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("playback from 40 at frame %d, speed %d after 5 s", idx, speed)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkLoopMarks: I and O mark a loop; playback inside it wraps instead of
// stopping.
func checkLoopMarks(t *testing.T, ui *serial, tl *Timeline, w fyne.Window) {
	t.Helper()
	ui.DoAndWait(func() {
		tl.Seek(10)
		w.Canvas().Focused().TypedRune('i')
		tl.Seek(14)
		w.Canvas().Focused().TypedRune('o')
		if lo, hi, ok := tl.loop(); !ok || lo != 10 || hi != 14 || !strings.HasSuffix(tl.code.Text, "loop 11-15") {
			t.Errorf("loop %d-%d %v, time code %q", lo, hi, ok, tl.code.Text)
		}
		tl.Seek(12)
		tl.TogglePlay()
	})
	seen := map[int]bool{}
	for end := time.Now().Add(800 * time.Millisecond); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		ui.DoAndWait(func() { seen[tl.Index()] = true })
	}
	ui.DoAndWait(func() {
		tl.Pause()
		w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	})
	for i := range seen {
		if i < 10 || i > 14 {
			t.Errorf("looped playback showed frame %d outside 10-14", i)
		}
	}
	if !seen[10] || !seen[14] {
		t.Errorf("0.8 s of looped playback (%d frames at 24 fps) should wrap through 10..14: saw %v", 19, seen)
	}
}

// checkHoverStrip: hovering over the scrub bar shows the frame under the
// pointer without moving the playhead.
func checkHoverStrip(t *testing.T, ui *serial, tl *Timeline, w fyne.Window) {
	t.Helper()
	ui.DoAndWait(func() {
		var hover *scrubHover
		for _, o := range test.LaidOutObjects(tl) {
			if hv, ok := o.(*scrubHover); ok {
				hover = hv
			}
		}
		if hover == nil {
			t.Fatal("no hover strip over the slider")
		}
		at := tl.Index()
		for _, i := range []int{0, 23, 47} {
			// Aim at the slider's own position for frame i.
			tl.slider.Value = float64(i)
			tl.slider.Refresh()
			x := sliderX(tl, i)
			t.Logf("frame %d: slider handle at x=%.1f of %.0f", i, x, tl.slider.Size().Width)
			hover.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(x, 5)}})
			if tl.hoverIndex != i || !tl.hoverImg.Visible() || frameNumberOf(tl.hoverImg.Image, 320) != i {
				t.Errorf("hover over frame %d at x=%.0f: shows %d (picture %d, visible %v)", i, x, tl.hoverIndex, frameNumberOf(tl.hoverImg.Image, 320), tl.hoverImg.Visible())
			}
		}
		tl.slider.Value = float64(at)
		tl.slider.Refresh()
		hover.MouseOut()
		if tl.hoverImg.Visible() || tl.Index() != at {
			t.Errorf("after hovering: thumbnail visible %v, playhead %d (was %d)", tl.hoverImg.Visible(), tl.Index(), at)
		}
	})
}

// checkTypingElsewhere: typing into another widget does not move the
// playhead.
func checkTypingElsewhere(t *testing.T, ui *serial, tl *Timeline, w fyne.Window) {
	t.Helper()
	ui.DoAndWait(func() {
		e := widgetEntry()
		w.SetContent(containerOf(tl, e))
		w.Canvas().Focus(e)
		test.Type(e, "lll")
		if tl.Speed() != 0 || e.Text != "lll" {
			t.Errorf("typing into an entry: speed %d, entry %q", tl.Speed(), e.Text)
		}
	})
}

// BenchmarkScrub measures a scrub at H3's largest canvas (768x1344): from
// the slider's change to the new frame set on the viewer's image as the
// *image.RGBA the GL painter uploads without converting. Every scrub jumps
// to a frame not in the cache. "proxy" is the studio's setup (a half-size
// copy shows at once, the full frame follows from a background decode:
// sharp-ms is that second latency); "full" decodes on the UI goroutine.
func BenchmarkScrub768x1344(b *testing.B) {
	path := filepath.Join(b.TempDir(), "numbered.mp4")
	if err := media.EncodeMP4(b.Context(), path, media.EncodeOptions{Width: 768, Height: 1344, Preset: "ultrafast"}, numberedFrames(48, 768, 1344)); err != nil {
		b.Fatal(err)
	}
	full, err := media.LoadFrames(b.Context(), path, media.FrameStoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	w, h := proxySize(full)
	proxy, err := media.LoadFrames(b.Context(), path, media.FrameStoreOptions{Width: w, Height: h})
	if err != nil {
		b.Fatal(err)
	}
	for _, withProxy := range []bool{true, false} {
		name := "full"
		if withProxy {
			name = "proxy"
		}
		b.Run(name, func(b *testing.B) {
			ui := newSerial(b)
			tl, _ := newTimelineWindow(b, ui)
			sharp := make(chan int, 1)
			ui.DoAndWait(func() {
				tl.Load(full)
				if withProxy {
					tl.LoadProxy(proxy)
				}
				tl.onSharp = func(i int) {
					select {
					case sharp <- i:
					default:
					}
				}
			})
			var lat, sharpLat []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				target := (i*17 + 5) % full.Len()
				var t0 time.Time
				shown, number := -1, -1
				ui.DoAndWait(func() {
					tl.cacheMu.Lock()
					tl.cache, tl.order = map[int]image.Image{}, nil
					tl.cacheMu.Unlock()
					if tl.Index() == target {
						tl.index = -1
					}
					for len(sharp) > 0 {
						<-sharp
					}
					t0 = time.Now()
					tl.slider.SetValue(float64(target))
					lat = append(lat, time.Since(t0))
					shown, number = tl.Index(), frameNumberOf(tl.Image(), 768)
				})
				if shown != target || number != target {
					b.Fatalf("scrub to %d shows frame %d, picture of frame %d", target, shown, number)
				}
				for got := <-sharp; got != target; got = <-sharp {
				}
				sharpLat = append(sharpLat, time.Since(t0))
			}
			b.StopTimer()
			b.ReportMetric(median(lat), "median-ms")
			b.ReportMetric(pct(lat, 0.9), "p90-ms")
			b.ReportMetric(median(sharpLat), "sharp-ms")
		})
	}
}

func median(d []time.Duration) float64 { return pct(d, 0.5) }

// pct is the p-quantile of d in milliseconds.
func pct(d []time.Duration, p float64) float64 {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return float64(s[int(p*float64(len(s)-1))].Microseconds()) / 1000
}

// sliderX is the x, in the slider's coordinates, where the slider puts
// value i (the middle of its handle), from the slider's own rendering.
func sliderX(tl *Timeline, i int) float32 {
	var x float32 = -1
	for _, o := range test.LaidOutObjects(tl.slider) {
		if c, ok := o.(*canvas.Circle); ok && c.Size().Width > 6 {
			x = c.Position().X + c.Size().Width/2
		}
	}
	return x
}

func widgetEntry() *widget.Entry { return widget.NewEntry() }

func containerOf(objs ...fyne.CanvasObject) fyne.CanvasObject { return container.NewVBox(objs...) }
