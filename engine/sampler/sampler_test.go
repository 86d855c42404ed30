package sampler

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"h3studio/engine/weights/safetensors"
)

// fixture is tools/fixtures/dit/testdata/sampler.safetensors: SGLang's
// minimax_h3_time_shift_sigmas for N forwards (num_steps = N+1 points).
func fixture(t *testing.T) *safetensors.File {
	t.Helper()
	f, err := safetensors.Open(filepath.Join("..", "..", "tools", "fixtures", "dit", "testdata", "sampler.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func tensor(t *testing.T, f *safetensors.File, name string) []float32 {
	t.Helper()
	x, ok := f.Tensor(name)
	if !ok {
		t.Fatalf("fixture lacks %s", name)
	}
	v, err := x.Float32()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// The official schedule is computed in float32 by torch; ours in float64.
const schedTol = 2e-6

func TestScheduleMatchesSGLang(t *testing.T) {
	f := fixture(t)
	for _, n := range []int{1, 2, 3, 4, 20, 50} {
		s, err := NewSchedule(n, DefaultVideoShift, DefaultAudioShift)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			got  []float64
		}{{"video", s.Video}, {"audio", s.Audio}} {
			want := tensor(t, f, fmt.Sprintf("sched.%s.%d", c.name, n))
			if len(want) != len(c.got) {
				t.Fatalf("%s N=%d: %d points, reference %d", c.name, n, len(c.got), len(want))
			}
			worst := 0.0
			for i := range want {
				worst = math.Max(worst, math.Abs(c.got[i]-float64(want[i])))
			}
			if worst > schedTol {
				t.Errorf("%s N=%d: max |Δσ| %.3g > %g (got %v, want %v)", c.name, n, worst, schedTol, c.got, want)
			}
			t.Logf("%s N=%d: max |Δσ| vs SGLang %.2g", c.name, n, worst)
		}
	}
}

// H3-FACTS §8 worked example for 4 forwards.
func TestScheduleFactsExample(t *testing.T) {
	s, err := NewSchedule(4, DefaultVideoShift, DefaultAudioShift)
	if err != nil {
		t.Fatal(err)
	}
	wantV := []float64{1, .973, .923, .800, 0}
	wantA := []float64{1, .900, .750, .500, 0}
	for i := range wantV {
		if math.Abs(s.Video[i]-wantV[i]) > 5e-4 || math.Abs(s.Audio[i]-wantA[i]) > 5e-4 {
			t.Fatalf("step %d: σ video %.4f audio %.4f, facts say %.3f %.3f", i, s.Video[i], s.Audio[i], wantV[i], wantA[i])
		}
	}
	if _, err := NewSchedule(0, 12, 3); err == nil {
		t.Error("0 steps accepted")
	}
	if _, err := NewSchedule(4, 0, 3); err == nil {
		t.Error("shift 0 accepted")
	}
}

// linearDenoiser returns v = a·x + b (elementwise), a field whose exact
// Euler trajectory is easy to compute in float64.
type linearDenoiser struct {
	a, b  float64
	calls []int
}

func (d *linearDenoiser) Velocity(_ context.Context, s Step, video, audio []float32) ([]float32, []float32, error) {
	d.calls = append(d.calls, s.Index)
	f := func(x []float32) []float32 {
		out := make([]float32, len(x))
		for i, v := range x {
			out[i] = float32(d.a*float64(v) + d.b)
		}
		return out
	}
	return f(video), f(audio), nil
}

func TestRunEuler(t *testing.T) {
	s, _ := NewSchedule(5, DefaultVideoShift, DefaultAudioShift)
	video, audio := []float32{1, -2, 0.5}, []float32{0.25, 3}
	d := &linearDenoiser{a: -0.7, b: 0.2}
	previews := 0
	if err := Run(context.Background(), Config{Schedule: s, Preview: func(step, total int, v []float32) { previews++ }}, d, video, audio); err != nil {
		t.Fatal(err)
	}
	ref := func(x float64, sig []float64) float64 {
		for i := 0; i+1 < len(sig); i++ {
			x += (sig[i] - sig[i+1]) * (d.a*x + d.b) // x_σ = (1−σ)x0 + σε, v = x0 − ε
		}
		return x
	}
	for i, x0 := range []float64{1, -2, 0.5} {
		if want := ref(x0, s.Video); math.Abs(float64(video[i])-want) > 1e-6 {
			t.Errorf("video[%d] = %v, float64 Euler %v", i, video[i], want)
		}
	}
	for i, x0 := range []float64{0.25, 3} {
		if want := ref(x0, s.Audio); math.Abs(float64(audio[i])-want) > 1e-6 {
			t.Errorf("audio[%d] = %v, float64 Euler %v", i, audio[i], want)
		}
	}
	if len(d.calls) != 5 || previews != 5 {
		t.Errorf("%d forwards and %d previews for 5 steps", len(d.calls), previews)
	}
}

func TestRunCancel(t *testing.T) {
	s, _ := NewSchedule(4, 12, 3)
	ctx, cancel := context.WithCancel(context.Background())
	d := &linearDenoiser{a: 1}
	video, audio := []float32{1}, []float32{1}
	err := Run(ctx, Config{Schedule: s, Preview: func(step, _ int, _ []float32) {
		if step == 2 {
			cancel()
		}
	}}, d, video, audio)
	if !errors.Is(err, context.Canceled) || len(d.calls) != 2 {
		t.Fatalf("err %v after %d forwards, want Canceled after 2", err, len(d.calls))
	}
}

// Reuse: forwards at 0, the last step and multiples of k; a skipped step
// uses v₁ + r(v₁ − v₀), r from the sigmas, as h3.c's extrapolate_velocity.
func TestReuse(t *testing.T) {
	s, _ := NewSchedule(7, DefaultVideoShift, DefaultAudioShift)
	d := &linearDenoiser{a: -0.5, b: 0.1}
	video, audio := []float32{2}, []float32{-1}
	if err := Run(context.Background(), Config{Schedule: s, Reuse: ReuseConfig{Every: 3}}, d, video, audio); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(d.calls) != "[0 3 6]" {
		t.Fatalf("forwards at %v, want [0 3 6]", d.calls)
	}
	// float64 replay of the same policy
	x, y := 2.0, -1.0
	var lv, la, pv, pa []float64
	var last, prev = -1, -1
	for i := 0; i < 7; i++ {
		var vv, va float64
		if i%3 == 0 || i == 6 {
			vv, va = d.a*x+d.b, d.a*y+d.b
			pv, pa, lv, la = lv, la, []float64{vv}, []float64{va}
			prev, last = last, i
		} else if prev < 0 {
			vv, va = lv[0], la[0]
		} else {
			rv := math.Max(-2, math.Min(2, (s.Video[i]-s.Video[last])/(s.Video[last]-s.Video[prev])))
			ra := math.Max(-2, math.Min(2, (s.Audio[i]-s.Audio[last])/(s.Audio[last]-s.Audio[prev])))
			vv, va = lv[0]+rv*(lv[0]-pv[0]), la[0]+ra*(la[0]-pa[0])
		}
		x += (s.Video[i] - s.Video[i+1]) * vv
		y += (s.Audio[i] - s.Audio[i+1]) * va
	}
	if math.Abs(float64(video[0])-x) > 1e-5 || math.Abs(float64(audio[0])-y) > 1e-5 {
		t.Errorf("reuse run ended at %v %v, float64 replay %v %v", video[0], audio[0], x, y)
	}
	if _, err := newReuser(ReuseConfig{Every: 9}, 7); err == nil {
		t.Error("reuse 9 accepted")
	}
}

func TestThinning(t *testing.T) {
	scores := []float64{0.01, 0.02, 0.5, 0.1, 0.9, 0.05, 0.3, 0.001}
	act, err := ThinningConfig{Keep: 5}.Active(scores)
	if err != nil {
		t.Fatal(err)
	}
	// candidates 2..6; the three smallest are 5 (0.05), 3 (0.1), 6 (0.3); 0, 1, 7 stay
	if got := fmt.Sprint(act); got != "[true true true false true false false true]" {
		t.Errorf("active %s", got)
	}
	all, _ := ThinningConfig{}.Active(scores)
	for i, a := range all {
		if !a {
			t.Errorf("block %d dropped with thinning off", i)
		}
	}
	if _, err := (ThinningConfig{Keep: 2}).Active(scores); err == nil {
		t.Error("keeping 2 of 8 accepted")
	}
}

func TestNoiseDeterministic(t *testing.T) {
	a, b, c := Noise(42, 0, 1000), Noise(42, 0, 1000), Noise(42, 1, 1000)
	var mean, sq float64
	same := true
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("same seed and stream differ")
		}
		same = same && a[i] == c[i]
		mean += float64(a[i])
		sq += float64(a[i]) * float64(a[i])
	}
	mean /= 1000
	if same || math.Abs(mean) > 0.15 || math.Abs(sq/1000-1) > 0.15 {
		t.Errorf("streams identical=%v, mean %.3f, var %.3f", same, mean, sq/1000)
	}
}

// With the exact velocity of a straight flow path, one Euler step lands on
// the path: x_σ = (1−σ)·x0 + σ·ε, v = x0 − ε.
func TestEulerOnStraightPath(t *testing.T) {
	x0, eps := float32(0.75), float32(-1.5)
	at := func(s float64) float32 { return float32(1-s)*x0 + float32(s)*eps }
	x := []float32{at(0.9)}
	EulerStep(x, []float32{x0 - eps}, 0.9, 0.4)
	if math.Abs(float64(x[0]-at(0.4))) > 1e-6 {
		t.Fatalf("Euler step from σ=0.9 to 0.4 gave %v, the path is at %v", x[0], at(0.4))
	}
}

func TestPreviewImage(t *testing.T) {
	c, tt, h, w := 24, 2, 4, 6
	lat := make([]float32, c*tt*h*w)
	for i := range lat {
		lat[i] = -5 // other channels and frame 0 must not matter
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			lat[((0*tt+1)*h+y)*w+x] = float32(x) // red grows left to right
			lat[((1*tt+1)*h+y)*w+x] = float32(y) // green grows downwards
			lat[((2*tt+1)*h+y)*w+x] = 3          // flat blue
		}
	}
	img, err := PreviewImage(lat, c, tt, h, w, 1)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("preview %v, want %dx%d", b, w, h)
	}
	l, r := img.RGBAAt(0, 2), img.RGBAAt(w-1, 2)
	top, bot := img.RGBAAt(3, 0), img.RGBAAt(3, h-1)
	if l.R != 0 || r.R != 255 || top.G != 0 || bot.G != 255 || l.B != r.B {
		t.Errorf("left %v right %v top %v bottom %v", l, r, top, bot)
	}
	if _, err := PreviewImage(lat, c, tt, h, w, 2); err == nil {
		t.Error("frame out of range accepted")
	}
}
