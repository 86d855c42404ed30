//go:build long

package app

import (
	"h3studio/engine/plan"
	"testing"
)

// Longer end-to-end renders (make test-long): the default request at its
// full 512x512 size and 20 steps, a 10 s clip whose soundtrack is decoded
// in windows, a non-square FL2VA with only a last frame, and a Ref2VA at
// 73 frames under the balanced preset.

func TestLongRenderDefaultRequest(t *testing.T) {
	rd := newRenderer(t)
	r := tinyRequest(t, "default.mp4")
	r.Width, r.Height, r.Steps = DefaultWidth, DefaultHeight, plan.DefaultSteps
	render(t, rd, r)
	checkMP4(t, r.Output, DefaultWidth, DefaultHeight, DefaultFrames)
}

func TestLongRenderTenSeconds(t *testing.T) {
	rd := newRenderer(t)
	r := tinyRequest(t, "ten.mp4")
	r.Frames, r.Seconds = 0, 10
	job, _ := render(t, rd, r)
	if job.Plan.Frames != 243 {
		t.Fatalf("10 s planned as %d frames, want 243", job.Plan.Frames)
	}
	checkMP4(t, r.Output, 64, 64, 243)
}

func TestLongRenderLastFrameOnly(t *testing.T) {
	rd := newRenderer(t)
	r := tinyRequest(t, "last.mp4")
	r.Width, r.Height, r.Steps = 128, 96, 6
	r.LastFrame = fixtures(t).image2
	job, _ := render(t, rd, r)
	checkMP4(t, r.Output, 128, 96, 22)
	if job.Plan.Task != "fl2va" || job.Plan.DiTRows.Conditions != 12 {
		t.Errorf("task %s with %d condition rows; want fl2va with 12", job.Plan.Task, job.Plan.DiTRows.Conditions)
	}
}

func TestLongRenderRef2VABalanced(t *testing.T) {
	rd := newRenderer(t)
	r := ref2va(t, "balanced.mp4")
	r.Width, r.Height, r.Frames, r.Steps, r.Preset = 128, 128, 73, 0, "balanced"
	job, _ := render(t, rd, r)
	checkMP4(t, r.Output, 128, 128, 73)
	if job.Stats.Forwards != 11 {
		t.Errorf("%d forwards, want 11 (20 steps, reuse 2)", job.Stats.Forwards)
	}
}
