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

	"h3studio/app"
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

// Scrubbing shows exactly the frame asked for, read back from its pixels,
// with its time code.
func TestTimelineFrameAccurate(t *testing.T) {
	ui := newSerial(t)
	st := numberedClip(t, 48, 320, 240)
	tl, _ := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		for _, i := range []int{17, 0, 47, 30, 17} {
			tl.slider.SetValue(float64(i))
			if got := frameNumber(tl.Image()); tl.Index() != i || got != i {
				t.Errorf("slider %d: index %d, picture shows frame %d", i, tl.Index(), got)
			}
			if want := app.TimecodeText(i, 48, 24); !strings.HasPrefix(tl.code.Text, want) {
				t.Errorf("time code %q, want %q", tl.code.Text, want)
			}
		}
	})
}

// The keys work once the viewer has focus: arrows, Shift+arrow (one
// second), Home/End and the J/K/L shuttle.
func TestTimelineKeys(t *testing.T) {
	ui := newSerial(t)
	st := numberedClip(t, 48, 320, 240)
	tl, w := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		tl.Seek(17)
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
}

// Space plays forward in real time and stops at the last frame; I and O
// mark a loop, and playback inside it wraps instead of stopping.
func TestTimelinePlaybackAndLoop(t *testing.T) {
	ui := newSerial(t)
	st := numberedClip(t, 48, 320, 240)
	tl, w := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		test.Tap(tl)
		tl.Seek(40)
		w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeySpace})
	})
	waitEnd(t, ui, tl, 47, nil)
	ui.DoAndWait(func() {
		tl.Seek(10)
		w.Canvas().Focused().TypedRune('i')
		tl.Seek(14)
		w.Canvas().Focused().TypedRune('o')
		if lo, hi, ok := tl.loop(); !ok || lo != 10 || hi != 14 || !strings.Contains(tl.code.Text, app.LoopText(10, 14)) {
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

// Hovering over the scrub bar shows the frame under the pointer without
// moving the playhead; typing into another widget does not move it either.
func TestTimelineHoverAndTyping(t *testing.T) {
	ui := newSerial(t)
	st := numberedClip(t, 48, 320, 240)
	tl, w := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		tl.Seek(5)
		hover := hoverStrip(t, w)
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

// hoverStrip is the pointer strip over the timeline's slider.
func hoverStrip(t testing.TB, w fyne.Window) *scrubHover {
	t.Helper()
	var hover *scrubHover
	visit(w, func(o fyne.CanvasObject, _ box) {
		if hv, ok := o.(*scrubHover); ok {
			hover = hv
		}
	})
	if hover == nil {
		t.Fatal("no hover strip over the slider")
	}
	return hover
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

// box is an object's rectangle in canvas coordinates, the ones
// test.MoveMouse takes.
type box struct{ x0, y0, x1, y1 float32 }

// boxOf is o's box; the test driver's absolute positions are inside its
// simulated inset, which is added back.
func boxOf(o fyne.CanvasObject) box {
	c := fyne.CurrentApp().Driver().CanvasForObject(o)
	inset, _ := c.InteractiveArea()
	p := fyne.CurrentApp().Driver().AbsolutePositionForObject(o).Add(inset)
	return box{p.X, p.Y, p.X + o.Size().Width, p.Y + o.Size().Height}
}

func (a box) overlaps(b box) bool { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1 }

// relayoutWindow lays the window out again, as a real window does after a
// widget's minimum size changes.
func relayoutWindow(w fyne.Window) {
	s := w.Canvas().Size()
	w.Resize(s.AddWidthHeight(1, 0))
	w.Resize(s)
}

// visit calls f for every object the window shows, with its box. It walks
// the widgets' live renderers: test.LaidOutObjects builds new ones, whose
// objects are not on the canvas.
func visit(w fyne.Window, f func(fyne.CanvasObject, box)) {
	var walk func(o fyne.CanvasObject, at fyne.Position)
	walk = func(o fyne.CanvasObject, at fyne.Position) {
		if !o.Visible() {
			return
		}
		p := at.Add(o.Position())
		f(o, box{p.X, p.Y, p.X + o.Size().Width, p.Y + o.Size().Height})
		kids := children(o)
		for _, k := range kids {
			walk(k, p)
		}
	}
	walk(w.Content(), fyne.Position{})
}

// labelTexts are the texts of the labels the window shows.
func labelTexts(w fyne.Window) []string {
	var out []string
	visit(w, func(o fyne.CanvasObject, _ box) {
		if l, ok := o.(*widget.Label); ok {
			out = append(out, l.Text)
		}
	})
	return out
}

// The time code reads HH:MM:SS:FF at the clip's 24 fps, so frame 22 of a
// 0.92 s clip is 21 frames into second 0, never "21 seconds"; the frame
// number follows it.
func TestTimelineTimecodeHHMMSSFF(t *testing.T) {
	ui := newSerial(t)
	st := numberedClip(t, 48, 320, 240)
	tl, _ := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		for _, c := range []struct {
			i          int
			code, more string
		}{{0, "00:00:00:00", "frame 1/48"}, {21, "00:00:00:21", "frame 22/48"}, {47, "00:00:01:23", "frame 48/48"}} {
			tl.Seek(c.i)
			if !strings.HasPrefix(tl.code.Text, c.code) || !strings.Contains(tl.code.Text, c.more) {
				t.Errorf("frame index %d: time code %q, want %q then %q", c.i, tl.code.Text, c.code, c.more)
			}
		}
	})
}

// The in and out points are drawn on the bar: a tick at each, at the
// slider's own position for that frame, and the range between them.
func TestTimelineInOutMarks(t *testing.T) {
	ui := newSerial(t)
	st := numberedClip(t, 48, 320, 240)
	tl, w := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		test.Tap(tl)
		tl.Seek(10)
		xIn := boxOf(tl.slider).x0 + sliderX(tl, 10)
		w.Canvas().Focused().TypedRune('i')
		tl.Seek(30)
		xOut := boxOf(tl.slider).x0 + sliderX(tl, 30)
		w.Canvas().Focused().TypedRune('o')
		bar := boxOf(tl.slider)
		var tickIn, tickOut, span bool
		visit(w, func(o fyne.CanvasObject, b box) {
			r, ok := o.(*canvas.Rectangle)
			if !ok || r.FillColor == nil || b.y0 < bar.y0 || b.y1 > bar.y1 {
				return
			}
			mid := (b.x0 + b.x1) / 2
			near := func(a, b float32) bool { return a-b < 1.5 && b-a < 1.5 }
			thin := b.x1-b.x0 <= 4
			tickIn = tickIn || thin && near(mid, xIn)
			tickOut = tickOut || thin && near(mid, xOut)
			span = span || near(b.x0, xIn) && near(b.x1, xOut)
		})
		if !tickIn || !tickOut || !span {
			t.Errorf("in at x=%.1f, out at x=%.1f: in tick %v, out tick %v, range %v", xIn, xOut, tickIn, tickOut, span)
		}
		// Escape clears the loop and its marks.
		w.Canvas().Focused().TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
		visit(w, func(o fyne.CanvasObject, b box) {
			if r, ok := o.(*canvas.Rectangle); ok && r.FillColor != nil && b.x1-b.x0 <= 4 && b.y0 >= bar.y0 && b.y1 <= bar.y1 {
				t.Errorf("after Escape a mark is still drawn at x=%.1f", (b.x0+b.x1)/2)
			}
		})
	})
}

// J/K/L show the shuttle speed beside the play button, and pausing clears it.
func TestTimelineShuttleReadout(t *testing.T) {
	ui := newSerial(t)
	st := numberedClip(t, 48, 320, 240)
	tl, w := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		test.Tap(tl)
		tl.Seek(24)
		for _, c := range []struct {
			r    rune
			want string
		}{{'l', "1×"}, {'l', "2×"}, {'l', "4×"}, {'k', ""}, {'j', "−1×"}, {'j', "−2×"}} {
			w.Canvas().Focused().TypedRune(c.r)
			texts := labelTexts(w)
			found := c.want == ""
			for _, s := range texts {
				if c.want != "" && s == c.want {
					found = true
				}
				if c.want == "" && strings.HasSuffix(s, "×") {
					found = false
				}
			}
			if !found {
				t.Errorf("after %c (speed %d): labels %q, want %q", c.r, tl.Speed(), texts, c.want)
			}
		}
		tl.Pause()
	})
}

// The hover thumbnail sits beside the slider, in the transport bar, and
// never over the picture.
func TestTimelineHoverBesideSlider(t *testing.T) {
	ui := newSerial(t)
	st := numberedClip(t, 48, 320, 240)
	tl, w := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		bar := boxOf(tl.slider)
		test.MoveMouse(w.Canvas(), fyne.NewPos((bar.x0+bar.x1)/2, (bar.y0+bar.y1)/2))
		if !tl.hoverImg.Visible() || tl.hoverIndex < 0 {
			t.Fatal("hovering the middle of the bar shows no thumbnail")
		}
		thumb, pic := boxOf(tl.hoverImg), boxOf(tl.img)
		if thumb.overlaps(pic) {
			t.Errorf("thumbnail %v covers the picture %v", thumb, pic)
		}
		if thumb.overlaps(bar) || thumb.y1 <= bar.y0 || thumb.y0 >= bar.y1 {
			t.Errorf("thumbnail %v is not beside the slider %v", thumb, bar)
		}
		test.MoveMouse(w.Canvas(), fyne.NewPos(pic.x0+10, pic.y0+10))
		if tl.hoverImg.Visible() {
			t.Error("the thumbnail stays after the pointer leaves the bar")
		}
	})
}

// The slider keeps its width whatever the label says (frame number, loop,
// audio note) and while a thumbnail shows: nothing in the bar moves.
func TestTimelineBarFixedWidth(t *testing.T) {
	ui := newSerial(t)
	st := numberedClip(t, 48, 320, 240)
	tl, w := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		relayoutWindow(w)
		want, min := tl.slider.Size().Width, tl.MinSize()
		check := func(what string) {
			relayoutWindow(w)
			if got := tl.slider.Size().Width; got != want || tl.MinSize() != min {
				t.Errorf("%s: slider %.0f px wide (was %.0f), timeline min %v (was %v); label %q", what, got, want, tl.MinSize(), min, tl.code.Text)
			}
		}
		tl.Seek(47)
		check("last frame")
		tl.Seek(10)
		tl.SetIn()
		tl.Seek(30)
		tl.SetOut()
		check("loop set")
		tl.note = "no audio device"
		tl.showCode()
		check("audio note")
		bar := boxOf(tl.slider)
		test.MoveMouse(w.Canvas(), fyne.NewPos((bar.x0+bar.x1)/2, (bar.y0+bar.y1)/2))
		check("hovering")
	})
}

// The viewer's picture is at least 16:9 at 240 px tall, even with the
// timeline at its minimum size.
func TestTimelineViewerSize(t *testing.T) {
	ui := newSerial(t)
	st := numberedClip(t, 48, 320, 240)
	tl, w := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		w.SetPadded(false)
		w.Resize(tl.MinSize())
		if s := tl.img.Size(); s.Height < 240 || s.Width < 240*16/9 {
			t.Errorf("at the timeline's minimum size %v the picture is %v", tl.MinSize(), s)
		}
	})
}

// A clip longer than the cell's three-digit template widens the cell on
// Load, so its last frame number is shown whole, not cut to an ellipsis.
func TestTimelineLongClipCode(t *testing.T) {
	ui := newSerial(t)
	st := media.NewFrameStore(16, 16, media.FPS)
	for i := 0; i < 1200; i++ {
		if err := st.Append(media.NewFrame(16, 16)); err != nil {
			t.Fatal(err)
		}
	}
	tl, w := newTimelineWindow(t, ui)
	ui.DoAndWait(func() {
		tl.Load(st)
		tl.Seek(1199)
		relayoutWindow(w)
		line := strings.SplitN(tl.code.Text, "\n", 2)[0]
		if need := widget.NewLabel(line).MinSize().Width; tl.code.Size().Width < need {
			t.Errorf("time code %q needs %.0f px, its cell is %.0f", line, need, tl.code.Size().Width)
		}
	})
}
